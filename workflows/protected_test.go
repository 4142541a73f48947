package workflows

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestProtectedDeleteOverrideIsAdminOnly: through kumo's frontend (a real
// Temporal server with its auth interceptor and a policy), a deployer's
// destroy --allow-protected-delete is refused before anything is planned,
// naming who, what and where, even though its client stamps itself admin;
// the home's owner (admin) may, and the protected resource is deleted.
func TestProtectedDeleteOverrideIsAdminOnly(t *testing.T) {
	p := newPeopleTest(t)
	guard := cm("guard")
	guard.Attributes["metadata"].(map[string]any)["annotations"] = map[string]any{engine.DeletePolicyAnnotation: "protect"}
	hash, err := p.h.backend.PutSpec(p.ctx, &engine.Spec{Resources: []engine.Resource{guard}})
	if err != nil {
		t.Fatal(err)
	}
	start := func(who, wf string, in runspec.RunInput) error {
		t.Helper()
		in.Project, in.Workspace, in.AutoApprove = "pd", "free", true
		run, err := p.as[who].ExecuteWorkflow(p.ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("pd", "free"), TaskQueue: runspec.TaskQueue}, wf, in)
		if err != nil {
			t.Fatal(err)
		}
		return run.Get(p.ctx, nil)
	}
	// "free" has no approval policy: --yes is enough.
	if err := start("", runspec.ApplyWorkflow, runspec.RunInput{SpecHash: hash}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if err := start("", runspec.DestroyWorkflow, runspec.RunInput{}); err == nil || !strings.Contains(err.Error(), "v1:ConfigMap:ns:guard") || !strings.Contains(err.Error(), "protected") {
		t.Fatalf("destroy without the override: %v, want a refusal naming the protected resource", err)
	}
	err = start("local:dan", runspec.DestroyWorkflow, runspec.RunInput{AllowProtectedDelete: true})
	if err == nil || !strings.Contains(err.Error(), "local:dan may not use --allow-protected-delete on pd/free: the admin role is required (the subject's roles here: deployer") {
		t.Fatalf("a deployer's override: %v", err)
	}
	if _, live := live(p.h.rt, "v1:ConfigMap:ns:guard"); !live {
		t.Fatal("the deployer's refused destroy deleted the protected resource")
	}
	if a := p.audit("pd"); !strings.Contains(a, "local:dan allow-protected-delete denied") {
		t.Errorf("audit: %s", a)
	}
	if err := start("", runspec.DestroyWorkflow, runspec.RunInput{AllowProtectedDelete: true}); err != nil {
		t.Fatalf("the owner's override: %v", err)
	}
	if _, live := live(p.h.rt, "v1:ConfigMap:ns:guard"); live {
		t.Fatal("the admin's destroy --allow-protected-delete left the protected resource")
	}
}

// live reports whether f holds the object id.
func live(f *fakeRuntime, id string) (map[string]any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objects[id]
	return o, ok
}
