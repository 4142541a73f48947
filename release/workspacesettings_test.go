package release_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// recordingRuntimes is fakeRuntime keeping the settings each runtime was
// asked for with.
type recordingRuntimes struct {
	*fakeRuntime
	mu   sync.Mutex
	seen []runspec.RuntimeSettings
}

func (r *recordingRuntimes) For(_ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
	return r.Runtime, nil
}

func (r *recordingRuntimes) last() runspec.RuntimeSettings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[len(r.seen)-1]
}

func tfResource(name, provider string) engine.Resource {
	ns, pn := "x", "y"
	return engine.Resource{ID: engine.TerraformID(ns, pn, "y_thing", name), Type: engine.Terraform,
		Attributes: map[string]any{"v": name}, Extensions: map[string]any{engine.ExtProvider: provider, engine.ExtResourceType: "y_thing"}}
}

// TestAllowedProvidersDefault: a workspace that lists no provider sources
// allows HashiCorp's and the registry hosts of what its releases applied; a
// provider only a failed release's spec asked for adds nothing. A workspace
// that lists them gets exactly its list, whatever the node's settings say.
func TestAllowedProvidersDefault(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rt := &recordingRuntimes{fakeRuntime: newFakeRuntime()}
		m := release.New(b, rt, &runs{})
		applied := tfResource("a", "registry.opentofu.org/x/y/1.0.0")
		info, err := m.Begin(ctx, begin("p", "w", "run-1", putSpec(t, b, applied)))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Record(ctx, info.Key, backend.StateEntry{ID: applied.ID, Resource: &applied}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		refused := tfResource("b", "evil.example.com/x/y")
		other, err := m.Begin(ctx, begin("q", "w", "run-2", putSpec(t, b, refused)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(ctx, release.FinishInput{Key: other.Key, Phase: engine.PhaseFailed, Error: "refused"}); err != nil {
			t.Fatal(err)
		}

		node := nodes(other)(refused.ID)
		node.Settings.TerraformAllowedProviders = []string{"*/*"} // never trusted
		if _, _, err := m.Preview(ctx, node); err != nil {
			t.Fatal(err)
		}
		want := []string{"registry.opentofu.org/*", "registry.terraform.io/hashicorp/*"}
		if got := rt.last().TerraformAllowedProviders; !slices.Equal(got, want) {
			t.Errorf("default allowed providers %v, want %v", got, want)
		}

		if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "listed", Runtimes: engine.Runtimes{
			Terraform: engine.TerraformRuntime{AllowedProviders: []string{"mirror.example.com/*"}}}}); err != nil {
			t.Fatal(err)
		}
		node.Key.Workspace = "listed"
		node.Key.Revision, node.PriorRevision = 0, 0 // a preview with no release
		if _, _, err := m.Preview(ctx, node); err != nil {
			t.Fatal(err)
		}
		if got := rt.last().TerraformAllowedProviders; !slices.Equal(got, []string{"mirror.example.com/*"}) {
			t.Errorf("listed allowed providers %v, want the workspace's", got)
		}
	})
}
