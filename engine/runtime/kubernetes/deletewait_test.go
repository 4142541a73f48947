package kubernetes

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// heldDeleted deletes a ConfigMap held by a finalizer with rt and returns
// the wait for it gone, once the object is marked for deletion, and a func
// that lets the finalizer go.
func heldDeleted(t *testing.T, rt *Runtime, admin dynamic.ResourceInterface, ns, name string) (wait func(context.Context) error, release func()) {
	t.Helper()
	held := configMap(ns, name, nil)
	held.Attributes["metadata"].(map[string]any)["finalizers"] = []any{"kumo.test/hold"}
	recorded := mustApply(t, rt, held)
	wait, err := rt.StartDelete(context.Background(), recorded)
	if err != nil || wait == nil {
		t.Fatalf("StartDelete of %s held by a finalizer: wait %v, %v; want a wait", name, wait != nil, err)
	}
	return wait, func() {
		if _, err := admin.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitReturns runs wait and fails the test unless it returns nil once
// release has run, and not before.
func waitReturns(t *testing.T, wait func(context.Context) error, release func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("the wait returned (%v) while a finalizer holds the object", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not return once the object was gone")
	}
}

// A delete's wait watches the object: once it is gone the wait returns
// with no read of the object itself (a poll would read it).
func TestDeleteWaitWatchesTheObject(t *testing.T) {
	c, _, ns := setup(t)
	counted, log := countedRuntime(t, c, 0)
	admin := dynamic.NewForConfigOrDie(c.RESTConfig()).Resource(configMaps).Namespace(ns)
	wait, release := heldDeleted(t, counted, admin, ns, "held-watched")
	log.take()
	waitReturns(t, wait, release)
	object := "GET /api/v1/namespaces/" + ns + "/configmaps/held-watched"
	if got := log.take(); slices.Contains(got, object) || !slices.Contains(got, "GET /api/v1/namespaces/"+ns+"/configmaps") {
		t.Errorf("the wait made %q: want a list and watch of the kind, no read of the object", got)
	}
}

// Credentials that may delete and read an object but not list or watch its
// kind: the wait reads the object until it is gone.
func TestDeleteWaitPollsWithoutAWatch(t *testing.T) {
	c, _, ns := setup(t)
	rc := rest.CopyConfig(c.RESTConfig())
	collection := "/api/v1/namespaces/" + ns + "/configmaps"
	var reads atomic.Int32
	rc.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && req.URL.Path == collection {
				body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"configmaps is forbidden: cannot list"}`
				return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
			}
			if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, collection+"/") {
				reads.Add(1)
			}
			return next.RoundTrip(req)
		})
	})
	limited, err := NewForConfig(rc, 0)
	if err != nil {
		t.Fatal(err)
	}
	admin := dynamic.NewForConfigOrDie(c.RESTConfig()).Resource(configMaps).Namespace(ns)
	wait, release := heldDeleted(t, limited, admin, ns, "held-polled")
	waitReturns(t, wait, release)
	if reads.Load() == 0 {
		t.Error("the wait never read the object: want it polled when its kind cannot be watched")
	}
}
