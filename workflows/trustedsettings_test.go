package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// settingsRecorder is fakeRuntime that keeps the settings each runtime was
// asked for with.
type settingsRecorder struct {
	*fakeRuntime
	mu   sync.Mutex
	seen []runspec.RuntimeSettings
}

func (r *settingsRecorder) For(_ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
	return r.fakeRuntime, nil
}

// TestRunInputCannotWidenWorkspaceSettings: a caller that starts an Apply
// directly, with a raw input naming extra kubeconfigs, exec plugins, a
// terraform binary and provider sources, gets the workspace's settings as
// stored in the backend: the worker reads them there, not from the input.
func TestRunInputCannotWidenWorkspaceSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(t)
	rec := &settingsRecorder{fakeRuntime: h.rt}
	tc := startWorker(t, activities.New(h.backend, rec, notRunning{}))
	ws := &engine.Workspace{Name: "w", Runtimes: engine.Runtimes{
		Kubernetes: engine.KubernetesRuntime{Kubeconfigs: map[string]string{"edge": "/etc/kumo/edge.kubeconfig"}},
		Terraform:  engine.TerraformRuntime{Binary: "tofu", AllowedProviders: []string{"registry.example.com/*"}},
	}}
	if err := h.backend.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	hash, err := h.backend.PutSpec(ctx, &engine.Spec{Resources: []engine.Resource{cm("a")}})
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]any{
		"project": "p", "workspace": "w", "specHash": hash, "autoApprove": true,
		"settings": map[string]any{
			"kubeconfigs":               map[string]any{"stolen": "/home/admin/.kube/config"},
			"allowExecPlugins":          true,
			"terraformBinary":           "/bin/sh",
			"terraformPluginDir":        "/tmp/evil-mirror",
			"terraformAllowedProviders": []any{"*/*/*"},
		},
	}
	wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, runspec.ApplyWorkflow, raw)
	if err != nil {
		t.Fatal(err)
	}
	var res runspec.Result
	if err := wr.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) == 0 {
		t.Fatal("no runtime was asked for")
	}
	for _, s := range rec.seen {
		if len(s.Kubeconfigs) != 1 || s.Kubeconfigs["edge"] != "/etc/kumo/edge.kubeconfig" || s.AllowExecPlugins {
			t.Errorf("kubeconfigs %v, allowExecPlugins %v: want the workspace's edge only, no exec plugins", s.Kubeconfigs, s.AllowExecPlugins)
		}
		if s.TerraformBinary != "tofu" || s.TerraformPluginDir != "" {
			t.Errorf("terraform binary %q, plugin dir %q: want the workspace's tofu and none", s.TerraformBinary, s.TerraformPluginDir)
		}
	}
}
