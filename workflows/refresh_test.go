package workflows

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// staleSpec is a and b, where b now depends on a (a dependsOn-only change:
// b stays unchanged, but what revision 1 recorded of it is stale), and c,
// new (so there is a plan to approve).
func staleSpec() *engine.Spec {
	return &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("c")}}
}

// withStaleRecord applies a and b, independent, as revision 1 and returns a run of
// staleSpec that waits for approval, with the given parallelism (1: the
// resources are previewed in one batch, PreviewResources; 3: one by one).
func withStaleRecord(t *testing.T, parallelism int) (*harness, *waitingRun) {
	h := newHarness(t)
	if _, err := h.run(Apply, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b")}}); err != nil {
		t.Fatal(err)
	}
	h.rt.mu.Lock()
	h.rt.applied = nil
	h.rt.mu.Unlock()
	w := newWaitingRun(h, staleSpec())
	w.in.Parallelism = parallelism
	return h, w
}

// stateOf returns revision rev's recorded state by resource ID.
func (h *harness) stateOf(rev int) map[string]engine.Resource {
	h.t.Helper()
	rel, err := h.backend.GetRelease(context.Background(), "p", "w", rev)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]engine.Resource{}
	if rel.State != nil {
		for _, r := range rel.State.Resources {
			out[r.ID] = r
		}
	}
	return out
}

// assertNoEntries checks that revision 2 has no state entries recorded.
func (h *harness) assertNoEntries(when string) {
	h.t.Helper()
	entries, err := h.backend.ListStateEntries(context.Background(), backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2})
	if err != nil {
		h.t.Fatal(err)
	}
	if len(entries) != 0 {
		h.t.Errorf("%s: state entries recorded %+v, want none (a preview writes nothing)", when, entries)
	}
}

// TestRunNotApprovedRecordsNoRefresh: a run whose preview found an unchanged
// resource recorded differently (b's dependsOn), then rejected, timed out or
// cancelled at its approval, writes no state entry: while it waits, and in
// the failed release it ends with, which records revision 1's state as it was.
func TestRunNotApprovedRecordsNoRefresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends the wait (nil: the approval timeout does).
		end func(w *waitingRun)
		msg string
	}{
		{"rejected", func(w *waitingRun) {
			w.answer(runspec.ApprovalRequest{Reason: "no"}, func(_ runspec.ApprovalAnswer, err error) {
				if err != nil {
					w.t.Errorf("rejection refused: %v", err)
				}
			})
		}, "rejected: no"},
		{"timed out", nil, "not approved within 2h0m0s"},
		{"cancelled", func(w *waitingRun) {
			w.env.SignalWorkflow(runspec.CancelSignal, runspec.Cancel{Reason: "wrong stack"})
			w.env.CancelWorkflow()
		}, "cancelled: wrong stack"},
	} {
		for _, parallelism := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/parallelism %d", tc.name, parallelism), func(t *testing.T) {
				h, w := withStaleRecord(t, parallelism)
				before := h.stateOf(1)
				w.in.ApprovalTimeout = 2 * time.Hour
				if tc.end != nil {
					w.whileWaiting(func(p runspec.Progress) {
						if !slices.ContainsFunc(p.Changes, func(c engine.Change) bool { return c.ID == "v1:ConfigMap:ns:b" && c.Action == engine.UnChanged }) {
							t.Errorf("changes %+v, want b unchanged", p.Changes)
						}
						h.assertNoEntries("awaiting approval")
						tc.end(w)
					})
				}
				_, err := w.finish()
				if err == nil {
					t.Fatal("the run succeeded")
				}
				rel, rerr := h.backend.GetRelease(context.Background(), "p", "w", 2)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if rel.Phase != engine.PhaseFailed || !strings.Contains(rel.Error, tc.msg) {
					t.Errorf("release %s %q, want failed with %q", rel.Phase, rel.Error, tc.msg)
				}
				if got := h.stateOf(2); !reflect.DeepEqual(got, before) {
					t.Errorf("revision 2 recorded %+v, want revision 1's state unchanged %+v", got, before)
				}
				if len(h.rt.applied) != 0 {
					t.Errorf("applied %v", h.rt.applied)
				}
			})
		}
	}
}

// TestApprovedRunRecordsTheRefresh: the same run approved records b's new
// dependsOn, exactly as runs recorded it when their previews wrote it (the
// version before previewRefreshChange), in one batch or one by one.
func TestApprovedRunRecordsTheRefresh(t *testing.T) {
	approved := func(t *testing.T, parallelism int, before bool) map[string]engine.Resource {
		h, w := withStaleRecord(t, parallelism)
		if before {
			asBeforeShape(w.env)
			w.env.OnGetVersion(previewRefreshChange, workflow.DefaultVersion, previewRefreshVersion).Return(workflow.DefaultVersion)
		}
		w.whileWaiting(func(runspec.Progress) {
			if !before {
				h.assertNoEntries("awaiting approval")
			}
			w.answer(runspec.ApprovalRequest{Approve: true}, func(_ runspec.ApprovalAnswer, err error) {
				if err != nil {
					t.Errorf("approval refused: %v", err)
				}
			})
		})
		res, err := w.finish()
		if err != nil || res.Phase != engine.PhaseSucceeded {
			t.Fatalf("approved run: %+v, %v", res, err)
		}
		if got := strings.Join(h.rt.applied, ","); got != "v1:ConfigMap:ns:c" {
			t.Errorf("applied %s, want only c", got)
		}
		return h.stateOf(2)
	}
	for _, parallelism := range []int{1, 3} {
		got := approved(t, parallelism, false)
		if b := got["v1:ConfigMap:ns:b"]; !slices.Equal(b.DependsOn, []string{"v1:ConfigMap:ns:a"}) {
			t.Errorf("parallelism %d: b recorded with dependsOn %v, want [a]", parallelism, b.DependsOn)
		}
		if want := approved(t, parallelism, true); !reflect.DeepEqual(got, want) {
			t.Errorf("parallelism %d: state %+v, runs that refreshed at preview recorded %+v", parallelism, got, want)
		}
	}
}
