package memory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
)

// The runtime's conformance is checked by engine/runtime/runtimetest; these
// tests cover its fault injection and what the workflow tests read from it.

func widget(id string, size int) *engine.Resource {
	return &engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: map[string]any{"spec": map[string]any{"size": size}}}
}

func TestFailTransientlyFailsNTimesThenWorks(t *testing.T) {
	rt := memory.New()
	rt.FailTransiently("a", 2)
	ctx := context.Background()
	for i := range 2 {
		_, err := rt.Apply(ctx, widget("a", 1), runtime.ApplyOptions{})
		if !errors.Is(err, memory.ErrTransient) || runtime.IsPermanent(err) {
			t.Fatalf("call %d: %v, want a retryable ErrTransient", i+1, err)
		}
	}
	if _, err := rt.Apply(ctx, widget("a", 1), runtime.ApplyOptions{}); err != nil {
		t.Fatalf("third call: %v", err)
	}
	if _, err := rt.Read(ctx, widget("b", 1)); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("another ID is affected: %v", err)
	}
}

func TestRejectFailsAppliesNotDryRuns(t *testing.T) {
	rt := memory.New()
	rt.Reject("a")
	ctx := context.Background()
	if _, err := rt.Apply(ctx, widget("a", 1), runtime.ApplyOptions{DryRun: true}); err != nil {
		t.Errorf("dry-run of a rejected ID: %v", err)
	}
	if _, err := rt.Apply(ctx, widget("a", 1), runtime.ApplyOptions{}); !runtime.IsPermanent(err) {
		t.Errorf("apply of a rejected ID: %v, want a permanent error", err)
	}
	if ids := rt.IDs(); len(ids) != 0 {
		t.Errorf("stored after a rejected apply: %v", ids)
	}
}

func TestDelayEndsWithTheContext(t *testing.T) {
	rt := memory.New()
	rt.SetDelay(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := rt.Apply(ctx, widget("a", 1), runtime.ApplyOptions{})
		done <- err
	}()
	for rt.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("apply cancelled during its delay: %v", err)
	}
	if _, ok := rt.Object("a"); ok {
		t.Error("a cancelled apply stored the object")
	}
}

func TestAppliedAndNormalized(t *testing.T) {
	rt := memory.New()
	ctx := context.Background()
	for _, id := range []string{"a", "b", "a"} {
		out, err := rt.Apply(ctx, widget(id, 3), runtime.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Stored and returned as after a JSON round trip: int becomes int64.
		if size := out.Attributes["spec"].(map[string]any)["size"]; size != int64(3) {
			t.Errorf("result size %T %v, want int64 3", size, size)
		}
	}
	if _, err := rt.Apply(ctx, widget("c", 1), runtime.ApplyOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if got := rt.Applied(); !slices.Equal(got, []string{"a", "b", "a"}) {
		t.Errorf("Applied = %v, want [a b a] (no dry-runs)", got)
	}
	if v := rt.Version("a"); v != 1 {
		t.Errorf("version of a re-applied unchanged object = %d, want 1 (the first write)", v)
	}
	attrs, _ := rt.Object("a")
	attrs["spec"].(map[string]any)["size"] = int64(9)
	if again, _ := rt.Object("a"); again["spec"].(map[string]any)["size"] != int64(3) {
		t.Error("Object returned the stored map, not a copy")
	}
}
