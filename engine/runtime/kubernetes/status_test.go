package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
)

// requestLog records the requests a client makes: the paths of the GET
// requests, and every request as "METHOD path".
type requestLog struct {
	mu    sync.Mutex
	paths []string
	all   []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		if req.Method == http.MethodGet {
			l.paths = append(l.paths, req.URL.Path)
		}
		l.all = append(l.all, req.Method+" "+req.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// take returns the requests made since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.all
	l.all = nil
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Status reads many objects of one kind and namespace with one list call,
// and reports the absent one Missing.
func TestStatusListsOncePerKindAndNamespace(t *testing.T) {
	c, rt, ns := setup(t)
	var resources []*engine.Resource
	for i := 0; i < 5; i++ {
		resources = append(resources, mustApply(t, rt, configMap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"k": "v"})))
	}
	resources = append(resources, configMap(ns, "absent", nil))

	var log requestLog
	rc := rest.CopyConfig(c.RESTConfig())
	rc.Wrap(log.wrap)
	counted, err := NewForConfig(rc, 0)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := counted.Status(context.Background(), resources, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		want := health.Healthy
		if i == len(nodes)-1 {
			want = health.Missing
		}
		if n.ID != resources[i].ID || n.Health.Status != want {
			t.Errorf("node %d: %+v, want %s %s", i, n, resources[i].ID, want)
		}
	}
	lists := 0
	for _, p := range log.paths {
		switch {
		case p == "/api/v1/namespaces/"+ns+"/configmaps":
			lists++
		case strings.HasPrefix(p, "/api/v1/namespaces/"+ns+"/configmaps/"):
			t.Errorf("status read one object: GET %s", p)
		}
	}
	if lists != 1 {
		t.Errorf("%d list calls of the ConfigMaps, want 1: %v", lists, log.paths)
	}
}
