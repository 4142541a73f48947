package release

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// workspaceTTL is how long a worker reuses a workspace it read: a run's nodes
// come in bursts, and one backend read per burst is enough. A workspace
// narrowed by its administrators takes effect within it.
const workspaceTTL = 2 * time.Second

// workspaces caches, per workspace name, what the worker read of it.
type workspaces struct {
	mu sync.Mutex
	m  map[string]*workspaceEntry
}

type workspaceEntry struct {
	at time.Time
	ws *engine.Workspace
	// providers is ws's allowed provider patterns with their default worked
	// out (nil until a Terraform resource needed them).
	providers []string
}

// trustedSettings overlays on s, a run's settings as its caller sent them,
// what only the workspace stored in the backend may decide: the clusters a
// resource may be sent to and whether kubeconfigs may run exec plugins, the
// terraform binary and plugin mirror, and the provider sources Terraform
// resources may use. A caller starting a workflow directly cannot widen them.
// A workspace that is not stored is empty: the narrowest settings.
func (m *Manager) trustedSettings(ctx context.Context, workspace string, typ engine.Type, s runspec.RuntimeSettings) (runspec.RuntimeSettings, error) {
	e, err := m.workspaceEntry(ctx, workspace)
	if err != nil {
		return s, err
	}
	k, tf := e.ws.Runtimes.Kubernetes, e.ws.Runtimes.Terraform
	s.Kubeconfigs, s.AllowExecPlugins = k.Kubeconfigs, k.AllowExecPlugins
	s.TerraformBinary, s.TerraformPluginDir = tf.Binary, tf.PluginDir
	s.TerraformAllowedProviders = nil
	if typ == engine.Terraform {
		if s.TerraformAllowedProviders, err = m.allowedProviders(ctx, e); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (m *Manager) workspaceEntry(ctx context.Context, name string) (*workspaceEntry, error) {
	m.workspaces.mu.Lock()
	e := m.workspaces.m[name]
	m.workspaces.mu.Unlock()
	if e != nil && time.Since(e.at) < workspaceTTL {
		return e, nil
	}
	ws, err := m.backend.GetWorkspace(ctx, name)
	if errors.Is(err, backend.ErrNotFound) {
		ws, err = &engine.Workspace{Name: name}, nil
	}
	if err != nil {
		return nil, kindf(ErrBackend, "read workspace %s: %v", name, err)
	}
	e = &workspaceEntry{at: time.Now(), ws: ws}
	m.workspaces.mu.Lock()
	if m.workspaces.m == nil {
		m.workspaces.m = map[string]*workspaceEntry{}
	}
	m.workspaces.m[name] = e
	m.workspaces.mu.Unlock()
	return e, nil
}

// allowedProviders is the workspace's runtimes.terraform.allowedProviders;
// when it sets none, engine.DefaultAllowedProviders plus the registry hosts
// of the providers in the recorded state of its projects' latest releases
// (what was applied, never what a refused spec asked for).
func (m *Manager) allowedProviders(ctx context.Context, e *workspaceEntry) ([]string, error) {
	if l := e.ws.Runtimes.Terraform.AllowedProviders; len(l) > 0 {
		return l, nil
	}
	m.workspaces.mu.Lock()
	cached := e.providers
	m.workspaces.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	projects, err := m.backend.ListProjects(ctx, e.ws.Name)
	if err != nil {
		return nil, kindf(ErrBackend, "list the projects of workspace %s: %v", e.ws.Name, err)
	}
	patterns := slices.Clone(engine.DefaultAllowedProviders)
	for _, p := range projects {
		rel, err := m.backend.LatestRelease(ctx, p, e.ws.Name)
		if errors.Is(err, backend.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, kindf(ErrBackend, "read the latest release of %s in workspace %s: %v", p, e.ws.Name, err)
		}
		if rel.State != nil {
			patterns = append(patterns, engine.ProviderHostsInUse(rel.State.Resources)...)
		}
	}
	slices.Sort(patterns)
	patterns = slices.Compact(patterns)
	m.workspaces.mu.Lock()
	e.providers = patterns
	m.workspaces.mu.Unlock()
	return patterns, nil
}
