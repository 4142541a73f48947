package client

import (
	"strings"
	"testing"

	"github.com/kumoproj/kumo/runspec"
)

// TestStatusReadIsNoRun: a status read through a task queue starts its
// workflow on the default queue with an ID of its own (never the apply's, so
// it blocks nothing) and without search attributes, so `kumo run list`, which
// lists only workflows filed under a KumoProject, never shows it.
func TestStatusReadIsNoRun(t *testing.T) {
	o := statusStartOptions(runspec.StatusInput{Project: "p", Workspace: "w", Settings: runspec.RuntimeSettings{TaskQueue: "edge"}})
	if !strings.HasPrefix(o.ID, "kumo-status/p/w/") || o.TaskQueue != runspec.TaskQueue {
		t.Errorf("workflow %s on queue %s", o.ID, o.TaskQueue)
	}
	if o.TypedSearchAttributes.Size() != 0 {
		t.Errorf("a status read files search attributes: %v", o.TypedSearchAttributes)
	}
	for _, f := range []RunFilter{{}, {Project: "p"}, {Workspace: "w"}} {
		q, err := f.Query()
		if err != nil || !strings.Contains(q, "KumoProject") && !strings.Contains(q, "KumoWorkspace") {
			t.Errorf("run list query %q (%v) does not require a kumo search attribute", q, err)
		}
	}
}
