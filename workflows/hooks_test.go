package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// hookOf is a hook Job named name in namespace ns, run at events.
func hookOf(name string, helm bool, weight int, events ...engine.HookEvent) engine.Hook {
	return engine.Hook{ID: "batch/v1:Job:ns:" + name, Helm: helm, Weight: weight, Events: events,
		Attributes: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
}

// hookSpec has two ConfigMaps and hooks at every point of a sync.
func hookSpec() *engine.Spec {
	post := hookOf("post", false, 0, engine.HookPostSync)
	post.DeletePolicies = []engine.HookDeletePolicy{engine.HookSucceeded}
	return &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}, Hooks: []engine.Hook{
		hookOf("pre", false, 0, engine.HookPreSync), hookOf("sync", false, 0, engine.HookSync), post,
		hookOf("fail", false, 0, engine.HookSyncFail), hookOf("helm-pre", true, -1, engine.HelmPreInstall),
		hookOf("helm-test", true, 0, engine.HelmTest),
	}}
}

// hookRuns lists a release's hooks as "point event id outcome [deleted]".
func hookRuns(runs []engine.HookRun) []string {
	var out []string
	for _, r := range runs {
		s := string(r.Point) + " " + string(r.Event) + " " + r.ID + " " + r.Outcome
		if r.Deleted {
			s += " deleted"
		}
		out = append(out, s)
	}
	return out
}

// An apply runs its hooks at their points: the pre hooks (Helm's by
// weight first) before any object, the sync hook with them, the post hook
// after, deleted once it succeeded; neither SyncFail nor test hooks. The
// release records them, and its state holds the objects alone.
func TestApplyRunsHooks(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(Apply, hookSpec())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", res.Revision)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pre pre-install batch/v1:Job:ns:helm-pre succeeded", "pre PreSync batch/v1:Job:ns:pre succeeded",
		"sync Sync batch/v1:Job:ns:sync succeeded", "post PostSync batch/v1:Job:ns:post succeeded deleted"}
	if got := hookRuns(rel.Hooks); !slices.Equal(got, want) {
		t.Errorf("hooks %q, want %q", got, want)
	}
	applied := strings.Join(h.rt.applied, " ")
	if !strings.HasPrefix(applied, "batch/v1:Job:ns:helm-pre batch/v1:Job:ns:pre ") || !strings.HasSuffix(applied, " batch/v1:Job:ns:post") {
		t.Errorf("applied in order %s", applied)
	}
	var ids []string
	for _, r := range rel.State.Resources {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b"}) {
		t.Errorf("state %v, want the ConfigMaps alone", ids)
	}
	// The next apply is an upgrade: the pre-install hook does not run.
	res, err = h.run(Apply, hookSpec())
	if err != nil {
		t.Fatal(err)
	}
	rel, _ = h.backend.GetRelease(context.Background(), "p", "w", res.Revision)
	if got := hookRuns(rel.Hooks); slices.Contains(got, "pre pre-install batch/v1:Job:ns:helm-pre succeeded") || len(got) != 3 {
		t.Errorf("upgrade hooks %q", got)
	}
}

// A PreSync hook that fails fails the run with no object applied, and the
// SyncFail hook runs.
func TestApplyFailedHook(t *testing.T) {
	h := newHarness(t)
	h.rt.reject["batch/v1:Job:ns:pre"] = true
	_, err := h.run(Apply, hookSpec())
	if err == nil || !strings.Contains(err.Error(), "pre hook failed: batch/v1:Job:ns:pre: Degraded: job failed") {
		t.Fatalf("err %v", err)
	}
	for _, id := range h.rt.applied {
		if strings.HasPrefix(id, "v1:ConfigMap") {
			t.Errorf("%s applied after its PreSync hook failed", id)
		}
	}
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pre pre-install batch/v1:Job:ns:helm-pre succeeded", "pre PreSync batch/v1:Job:ns:pre failed", "fail SyncFail batch/v1:Job:ns:fail succeeded"}
	if got := hookRuns(rel.Hooks); !slices.Equal(got, want) || rel.Phase != engine.PhaseFailed {
		t.Errorf("hooks %q (phase %s), want %q", got, rel.Phase, want)
	}
}

// failingHookSpec is hookSpec whose PreSync hook is bad-pre, which the
// recording's runtime fails.
func failingHookSpec() *engine.Spec {
	s := hookSpec()
	s.Hooks[0] = hookOf("bad-pre", false, 0, engine.HookPreSync)
	return s
}
