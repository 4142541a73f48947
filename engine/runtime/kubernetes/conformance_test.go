package kubernetes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime/runtimetest"
)

// TestConformance runs the runtime conformance suite against the real
// apiserver. The live object is observed through a client of its own; a
// transient failure is an apiserver answering 503 through a proxy, a slow apply
// one the proxy holds unanswered.
func TestConformance(t *testing.T) {
	c, rt, ns := setup(t)
	observer, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	settings := func(name, color string) *engine.Resource {
		return configMap(ns, name, map[string]any{"color": color, "size": "3"})
	}
	runtimetest.Run(t, runtimetest.Harness{
		Runtime: rt,
		Fixture: func(_ testing.TB, name string) runtimetest.Fixture {
			return runtimetest.Fixture{Create: settings(name, "blue"), Update: settings(name, "green"), Field: "data.color"}
		},
		Observe: func(t testing.TB, res *engine.Resource) runtimetest.Observed {
			name := res.Attributes["metadata"].(map[string]any)["name"].(string)
			obj, err := observer.Resource(configMaps).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return runtimetest.Observed{}
			}
			if err != nil {
				t.Fatalf("observe %s: %v", res.ID, err)
			}
			data, _ := obj.Object["data"].(map[string]any)
			return runtimetest.Observed{Exists: true, Value: data["color"], Version: obj.GetResourceVersion()}
		},
		Invalid: func(_ testing.TB, name string) []*engine.Resource {
			wrongType := settings(name+"-type", "red")
			wrongType.Attributes["data"] = "not a map" // schema rejection
			badName := settings(strings.ToUpper(name)+"_X", "red")
			unknownKind := &engine.Resource{ID: "kumo.example.com/v1:Widget:" + ns + ":" + name, Type: engine.Kubernetes, Attributes: map[string]any{
				"apiVersion": "kumo.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name, "namespace": ns},
			}}
			return []*engine.Resource{wrongType, badName, unknownKind}
		},
		Slow: func(t testing.TB, name string) runtimetest.Slow {
			res := settings(name, "blue")
			rt, started := stalled(t, c.RESTConfig(), res)
			return runtimetest.Slow{Runtime: rt, Resource: res, Started: started}
		},
		Transient: func(t testing.TB, name string) runtimetest.Transient {
			res := settings(name, "blue")
			return runtimetest.Transient{Runtime: unavailableOnce(t, c.RESTConfig(), res), Failing: res, Retry: res}
		},
	})
}

// unavailableOnce returns a Runtime whose requests go through a proxy to the
// apiserver that answers the first write of res with 503 Service Unavailable
// (as an apiserver restarting or overloaded does, with no Retry-After, so that
// client-go itself does not retry).
func unavailableOnce(t testing.TB, cfg *rest.Config, res *engine.Resource) *Runtime {
	var failed atomic.Bool
	return throughProxy(t, cfg, res, func(w http.ResponseWriter, r *http.Request) bool {
		if !failed.CompareAndSwap(false, true) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}`))
		return true
	})
}

// stalled returns a Runtime whose writes of res go to a proxy that holds them
// unanswered until the client gives up, and a function reporting whether one
// is held now.
func stalled(t testing.TB, cfg *rest.Config, res *engine.Resource) (*Runtime, func() bool) {
	var held atomic.Int32
	rt := throughProxy(t, cfg, res, func(w http.ResponseWriter, r *http.Request) bool {
		// The server notices the client hanging up only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		held.Add(1)
		defer held.Add(-1)
		<-r.Context().Done()
		return true
	})
	return rt, func() bool { return held.Load() > 0 }
}

// throughProxy returns a Runtime whose requests go through a proxy to the
// apiserver; intercept sees the writes (PATCH) of res first and answers them
// itself when it returns true.
func throughProxy(t testing.TB, cfg *rest.Config, res *engine.Resource, intercept func(http.ResponseWriter, *http.Request) bool) *Runtime {
	t.Helper()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	name := res.Attributes["metadata"].(map[string]any)["name"].(string)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: transport}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/"+name) && intercept(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rt, err := NewForConfig(&rest.Config{Host: srv.URL}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
