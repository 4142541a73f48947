package runtimetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
)

// TestMemory runs the suite against the in-memory runtime.
func TestMemory(t *testing.T) {
	store := memory.New()
	Run(t, memoryHarness(store, store))
}

// memoryHarness tests rt, which stores its objects in store (rt is store, or a
// runtime wrapped around it).
func memoryHarness(rt runtime.Runtime, store *memory.Runtime) Harness {
	object := func(id, color string) *engine.Resource {
		return &engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: map[string]any{
			"kind": "Widget", "spec": map[string]any{"color": color, "size": 3},
		}}
	}
	return Harness{
		Runtime: rt,
		Fixture: func(_ testing.TB, name string) Fixture {
			id := "memory:" + name
			return Fixture{Create: object(id, "blue"), Update: object(id, "green"), Field: "spec.color"}
		},
		Observe: func(_ testing.TB, res *engine.Resource) Observed {
			attrs, ok := store.Object(res.ID)
			return Observed{Exists: ok, Value: lookup(attrs, "spec.color"), Version: strconv.FormatInt(store.Version(res.ID), 10)}
		},
		Invalid: func(_ testing.TB, name string) []*engine.Resource {
			rejected := object("memory:"+name+"-rejected", "red")
			store.Reject(rejected.ID)
			return []*engine.Resource{rejected, {ID: "memory:" + name + "-empty", Type: engine.Kubernetes}}
		},
		Slow: func(_ testing.TB, name string) Slow {
			// A runtime of its own: the delay holds every call.
			slow := memory.New()
			slow.SetDelay(time.Hour)
			return Slow{Runtime: slow, Resource: object("memory:"+name, "blue"), Started: func() bool { return slow.Waiting() > 0 }}
		},
		Transient: func(_ testing.TB, name string) Transient {
			res := object("memory:"+name, "blue")
			store.FailTransiently(res.ID, 1)
			return Transient{Runtime: rt, Failing: res, Retry: res}
		},
	}
}
