package client_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestSettingsComeFromTheWorkspace: a run's runtime settings are the workspace's,
// each overridden by a flag that was given.
func TestSettingsComeFromTheWorkspace(t *testing.T) {
	ctx := context.Background()
	c, err := client.Open(client.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	ws := &engine.Workspace{Name: "prod", Runtimes: engine.Runtimes{
		Kubernetes: engine.KubernetesRuntime{Kubeconfig: "/etc/prod.kubeconfig", Context: "prod",
			Kubeconfigs: map[string]string{"edge": "/etc/edge.kubeconfig"}, AllowExecPlugins: true},
		Terraform: engine.TerraformRuntime{Binary: "tofu", PluginDir: "/mirror"},
	}}
	if err := c.CreateWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	got, err := c.Settings(ctx, "prod", runspec.RuntimeSettings{Context: "override"})
	if err != nil {
		t.Fatal(err)
	}
	// The rest is the worker's to read from the stored workspace.
	want := runspec.RuntimeSettings{Kubeconfig: "/etc/prod.kubeconfig", Context: "override"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	if got, err := c.Settings(ctx, engine.DefaultWorkspace, runspec.RuntimeSettings{Kubeconfig: "/k"}); err != nil || !reflect.DeepEqual(got, runspec.RuntimeSettings{Kubeconfig: "/k"}) {
		t.Errorf("default workspace settings %+v, %v", got, err)
	}
	if _, err := c.Settings(ctx, "qa", runspec.RuntimeSettings{}); err == nil || !strings.Contains(err.Error(), `workspace "qa" does not exist`) {
		t.Errorf("unknown workspace: %v", err)
	}
}
