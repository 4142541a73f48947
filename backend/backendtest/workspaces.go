package backendtest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Workspace returns a workspace named name whose fields exercise the codec.
func Workspace(name string) *engine.Workspace {
	return &engine.Workspace{
		Name: name,
		Modules: map[string]engine.ModuleDefaults{
			"service": {Config: map[string]any{
				"replicas": int64(2), "ratio": 0.5, "big": int64(9007199254740993),
				"labels": map[string]any{"team": "a", "on": "yes"}, "ports": []any{int64(80), int64(443)},
			}},
			"mysql": {Config: map[string]any{"version": "8.0", "size": nil}},
		},
		Generators: map[string]engine.GeneratorDecl{"ext": {Command: []string{"./gen", "--flag", "a b"}}},
		Runtimes: engine.Runtimes{
			Kubernetes: engine.KubernetesRuntime{Kubeconfig: "/home/u/.kube/config", Context: "prod"},
			Terraform:  engine.TerraformRuntime{Binary: "tofu", PluginDir: "/opt/providers"},
		},
		Context: map[string]any{"region": "eu-west-1", "zones": []any{int64(1), int64(2)}, "weight": 1.25},
	}
}

func requireWorkspace(t *testing.T, what string, got *engine.Workspace, err error, want *engine.Workspace) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

func requireWorkspaceNames(t *testing.T, b backend.Backend, want ...string) {
	t.Helper()
	names, err := b.ListWorkspaces(ctx)
	if err != nil {
		t.Fatalf("ListWorkspaces: %v", err)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("ListWorkspaces: %q, want %q", names, want)
	}
}

func testWorkspaces(t *testing.T, b backend.Backend) {
	requireWorkspaceNames(t, b)
	if _, err := b.GetWorkspace(ctx, "dev"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetWorkspace of a missing workspace: %v, want ErrNotFound", err)
	}
	if err := b.DeleteWorkspace(ctx, "dev"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("DeleteWorkspace of a missing workspace: %v, want ErrNotFound", err)
	}

	dev := Workspace("dev")
	if err := b.CreateWorkspace(ctx, dev); err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	got, err := b.GetWorkspace(ctx, "dev")
	requireWorkspace(t, "GetWorkspace", got, err, Workspace("dev"))
	// Creating it again fails, with the same content or another, and keeps it.
	for _, again := range []*engine.Workspace{Workspace("dev"), {Name: "dev"}} {
		if err := b.CreateWorkspace(ctx, again); !errors.Is(err, backend.ErrExists) {
			t.Fatalf("CreateWorkspace of an existing workspace: %v, want ErrExists", err)
		}
	}
	got, err = b.GetWorkspace(ctx, "dev")
	requireWorkspace(t, "GetWorkspace after refused creates", got, err, Workspace("dev"))
	// The caller's copy is not retained.
	dev.Context["region"] = "changed"
	dev.Modules["service"].Config["replicas"] = int64(9)
	got, err = b.GetWorkspace(ctx, "dev")
	requireWorkspace(t, "GetWorkspace after changing the caller's copy", got, err, Workspace("dev"))

	// Put replaces, and creates.
	changed := Workspace("dev")
	changed.Runtimes.Kubernetes.Context = "dev"
	delete(changed.Modules, "mysql")
	changed.Context = nil
	if err := b.PutWorkspace(ctx, changed); err != nil {
		t.Fatalf("PutWorkspace: %v", err)
	}
	got, err = b.GetWorkspace(ctx, "dev")
	requireWorkspace(t, "GetWorkspace after put", got, err, changed)
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "prod"}); err != nil {
		t.Fatalf("PutWorkspace of a new workspace: %v", err)
	}
	got, err = b.GetWorkspace(ctx, "prod")
	requireWorkspace(t, "GetWorkspace of an empty workspace", got, err, &engine.Workspace{Name: "prod"})
	if err := b.CreateWorkspace(ctx, Workspace("Staging-2.eu_west")); err != nil {
		t.Fatal(err)
	}
	requireWorkspaceNames(t, b, "Staging-2.eu_west", "dev", "prod")

	if err := b.DeleteWorkspace(ctx, "prod"); err != nil {
		t.Fatalf("DeleteWorkspace: %v", err)
	}
	if _, err := b.GetWorkspace(ctx, "prod"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetWorkspace after delete: %v, want ErrNotFound", err)
	}
	if err := b.DeleteWorkspace(ctx, "prod"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("DeleteWorkspace twice: %v, want ErrNotFound", err)
	}
	requireWorkspaceNames(t, b, "Staging-2.eu_west", "dev")
	if err := b.CreateWorkspace(ctx, Workspace("prod")); err != nil {
		t.Fatalf("CreateWorkspace after delete: %v", err)
	}
	requireWorkspaceNames(t, b, "Staging-2.eu_west", "dev", "prod")

	// Workspaces are not releases, nor the other way round.
	mustCreate(t, b, Release("p", "qa", 1))
	requireWorkspaceNames(t, b, "Staging-2.eu_west", "dev", "prod")
	if projects, err := b.ListProjects(ctx, "dev"); err != nil || len(projects) != 0 {
		t.Fatalf("ListProjects(dev) with a stored workspace but no release: %q, %v", projects, err)
	}
}

// testConcurrentCreateWorkspace: of 10 creators of one workspace, exactly one wins.
func testConcurrentCreateWorkspace(t *testing.T, b backend.Backend) {
	winner := race(t, 10, "creators of one workspace", backend.ErrExists, func(i int) error {
		ws := Workspace("race")
		ws.Context["creator"] = int64(i)
		return b.CreateWorkspace(ctx, ws)
	})
	got, err := b.GetWorkspace(ctx, "race")
	if err != nil || got.Context["creator"] != int64(winner) {
		t.Fatalf("workspace holds creator %v (%v), want the winner %d", got.Context["creator"], err, winner)
	}
}

// testListProjects: the projects with a release in a workspace, sorted.
func testListProjects(t *testing.T, b backend.Backend) {
	requireProjects := func(workspace string, want ...string) {
		t.Helper()
		got, err := b.ListProjects(ctx, workspace)
		if err != nil {
			t.Fatalf("ListProjects(%s): %v", workspace, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ListProjects(%s): %q, want %q", workspace, got, want)
		}
	}
	requireProjects("dev")
	for _, r := range []*engine.Release{Release("web", "dev", 1), Release("api", "dev", 1), Release("api", "dev", 2), Release("db", "prod", 1), Release("Zeta", "dev", 1)} {
		mustCreate(t, b, r)
	}
	requireProjects("dev", "Zeta", "api", "web")
	requireProjects("prod", "db")
	requireProjects("staging")
	// State entries and specs are not projects.
	if err := b.PutStateEntry(ctx, backend.ReleaseKey{Project: "db", Workspace: "prod", Revision: 1}, backend.StateEntry{ID: "v1:Namespace:x", Deleted: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutSpec(ctx, &engine.Spec{}); err != nil {
		t.Fatal(err)
	}
	requireProjects("prod", "db")
	requireProjects("dev", "Zeta", "api", "web")
	for i := range 3 {
		mustCreate(t, b, Release(fmt.Sprintf("p%d", i), "prod", 1))
	}
	requireProjects("prod", "db", "p0", "p1", "p2")
}
