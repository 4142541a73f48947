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

// hostsInUseTTL is how long a worker reuses the provider hosts it found in a
// workspace's releases (the default of allowedProviders): finding them reads
// every project's latest release, and a run's Terraform nodes come in bursts.
// The workspace itself is read afresh by every step (oneStep), so what its
// administrators change takes effect at the next one.
const hostsInUseTTL = 2 * time.Second

// hostsInUse caches, per workspace, the provider host patterns its releases
// applied.
type hostsInUse struct {
	mu sync.Mutex
	m  map[string]hostsEntry
}

type hostsEntry struct {
	at       time.Time
	patterns []string
}

// trustedSettings overlays on s, a run's settings as its caller sent them,
// what only the workspace stored in the backend may decide: the clusters a
// resource may be sent to and whether kubeconfigs may run exec plugins, the
// terraform binary and plugin mirror, and the provider sources Terraform
// resources may use. A caller starting a workflow directly cannot widen them.
// A workspace that is not stored is empty: the narrowest settings.
func (m *Manager) trustedSettings(ctx context.Context, workspace string, typ engine.Type, s runspec.RuntimeSettings) (runspec.RuntimeSettings, error) {
	ws, err := m.storedWorkspace(ctx, workspace)
	if err != nil {
		return s, err
	}
	k, tf := ws.Runtimes.Kubernetes, ws.Runtimes.Terraform
	s.Kubeconfigs, s.AllowExecPlugins = k.Kubeconfigs, k.AllowExecPlugins
	s.TerraformBinary, s.TerraformPluginDir = tf.Binary, tf.PluginDir
	s.TerraformAllowedProviders = nil
	if typ == engine.Terraform {
		if s.TerraformAllowedProviders, err = m.allowedProviders(ctx, ws); err != nil {
			return s, err
		}
	}
	return s, nil
}

// stepMemoKey holds, in the context of one step over many resources (a
// batch, a batch's preview or waits), the workspaces that step read.
type stepMemoKey struct{}

type stepMemo struct {
	mu sync.Mutex
	ws map[string]*engine.Workspace
}

// oneStep scopes ctx to one step over many resources: the stored workspace is
// read once for all of them, not once per resource, and afresh by the next
// step, so what its administrators change takes effect there.
func oneStep(ctx context.Context) context.Context {
	if ctx.Value(stepMemoKey{}) != nil {
		return ctx
	}
	return context.WithValue(ctx, stepMemoKey{}, &stepMemo{ws: map[string]*engine.Workspace{}})
}

// storedWorkspace reads a workspace from the backend (once per step, see
// oneStep); one never stored is empty.
func (m *Manager) storedWorkspace(ctx context.Context, name string) (*engine.Workspace, error) {
	memo, _ := ctx.Value(stepMemoKey{}).(*stepMemo)
	if memo == nil {
		return m.readWorkspace(ctx, name)
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	if ws, ok := memo.ws[name]; ok {
		return ws, nil
	}
	ws, err := m.readWorkspace(ctx, name)
	if err == nil {
		memo.ws[name] = ws
	}
	return ws, err
}

func (m *Manager) readWorkspace(ctx context.Context, name string) (*engine.Workspace, error) {
	ws, err := m.backend.GetWorkspace(ctx, name)
	if errors.Is(err, backend.ErrNotFound) {
		return &engine.Workspace{Name: name}, nil
	}
	if err != nil {
		return nil, kindf(ErrBackend, "read workspace %s: %v", name, err)
	}
	return ws, nil
}

// allowedProviders is the workspace's runtimes.terraform.allowedProviders;
// when it sets none, engine.DefaultAllowedProviders plus the registry hosts
// of the providers in the recorded state of its projects' latest releases
// (what was applied, never what a refused spec asked for).
func (m *Manager) allowedProviders(ctx context.Context, ws *engine.Workspace) ([]string, error) {
	if l := ws.Runtimes.Terraform.AllowedProviders; len(l) > 0 {
		return l, nil
	}
	m.hosts.mu.Lock()
	e, ok := m.hosts.m[ws.Name]
	m.hosts.mu.Unlock()
	if ok && time.Since(e.at) < hostsInUseTTL {
		return e.patterns, nil
	}
	projects, err := m.backend.ListProjects(ctx, ws.Name)
	if err != nil {
		return nil, kindf(ErrBackend, "list the projects of workspace %s: %v", ws.Name, err)
	}
	patterns := slices.Clone(engine.DefaultAllowedProviders)
	for _, p := range projects {
		rel, err := m.backend.LatestRelease(ctx, p, ws.Name)
		if errors.Is(err, backend.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, kindf(ErrBackend, "read the latest release of %s in workspace %s: %v", p, ws.Name, err)
		}
		if rel.State != nil {
			patterns = append(patterns, engine.ProviderHostsInUse(rel.State.Resources)...)
		}
	}
	slices.Sort(patterns)
	patterns = slices.Compact(patterns)
	m.hosts.mu.Lock()
	if m.hosts.m == nil {
		m.hosts.m = map[string]hostsEntry{}
	}
	m.hosts.m[ws.Name] = hostsEntry{at: time.Now(), patterns: patterns}
	m.hosts.mu.Unlock()
	return patterns, nil
}
