package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/runspec"
)

// TestRunRefusesInputForAnotherStack: the frontend authorizes a start by the
// stack its workflow ID names; a run whose (encrypted) input names another
// stack fails before any step, for every workflow type.
func TestRunRefusesInputForAnotherStack(t *testing.T) {
	at := time.Unix(1, 0)
	cases := []struct {
		typ, id string
		in      any
	}{
		{runspec.ApplyWorkflow, runspec.MutatingWorkflowID("shop", "dev"), runspec.RunInput{Project: "shop", Workspace: "prod", SpecHash: "abc"}},
		{runspec.DestroyWorkflow, runspec.MutatingWorkflowID("shop", "dev"), runspec.RunInput{Project: "bank", Workspace: "dev"}},
		{runspec.RollbackWorkflow, runspec.MutatingWorkflowID("shop", "dev"), runspec.RunInput{Project: "shop", Workspace: "prod"}},
		{runspec.PreviewWorkflow, runspec.MutatingWorkflowID("shop", "dev") + "/preview/1", runspec.RunInput{Project: "shop", Workspace: "prod"}},
		{runspec.GenerateWorkflow, runspec.MutatingWorkflowID("shop", "dev") + "/generate/1", runspec.GenerateInput{StackDir: "/x", Project: "shop", Workspace: "prod"}},
		{runspec.DriftWorkflow, runspec.DriftWorkflowID("shop", "dev", at), runspec.DriftInput{Project: "shop", Workspace: "prod"}},
		{runspec.DriftWorkflow, runspec.DriftScheduleID("shop", "dev") + "/scheduled-2026-11-25T00:00:00Z", runspec.DriftInput{Project: "shop", Workspace: "prod"}},
		{runspec.StatusWorkflow, runspec.StatusWorkflowID("shop", "dev", at), runspec.StatusInput{Project: "shop", Workspace: "prod"}},
	}
	for _, c := range cases {
		t.Run(c.typ+" "+c.id, func(t *testing.T) {
			h := newHarness(t)
			env := h.NewTestWorkflowEnvironment()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: c.id, TaskQueue: runspec.TaskQueue})
			activities.Register(env, h.acts)
			Register(env)
			var ran []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				ran = append(ran, info.ActivityType.Name)
			})
			env.ExecuteWorkflow(c.typ, c.in)
			err := env.GetWorkflowError()
			if err == nil || !strings.Contains(err.Error(), "is for shop/dev but its input names") {
				t.Fatalf("run of another stack's input: %v", err)
			}
			if len(ran) != 0 {
				t.Errorf("activities ran before the refusal: %v", ran)
			}
		})
	}
}

func TestStackOfWorkflowID(t *testing.T) {
	at := time.Unix(1, 0)
	for id, want := range map[string]string{
		runspec.MutatingWorkflowID("p", "w"):                 "p/w",
		runspec.MutatingWorkflowID("p", "w") + "/preview/9":  "p/w",
		runspec.DriftWorkflowID("p", "w", at):                "p/w",
		runspec.StatusWorkflowID("p", "w", at):               "p/w",
		runspec.DriftScheduleID("p", "w") + "/scheduled-now": "p/w",
		"kumo//w": "", "kumo/p": "", "other/p/w": "", "default-test-workflow-id": "",
	} {
		p, w, ok := runspec.StackOfWorkflowID(id)
		got := ""
		if ok {
			got = p + "/" + w
		}
		if got != want {
			t.Errorf("StackOfWorkflowID(%q) = %q, want %q", id, got, want)
		}
	}
}
