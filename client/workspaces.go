package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// currentWorkspaceFile under KUMO_HOME holds the workspace `kumo workspace switch`
// chose. It is per machine (per KUMO_HOME), not in the shared backend: switching
// must not move a teammate's target.
const currentWorkspaceFile = "workspace"

// Workspace returns a workspace; the default one exists even if never stored.
func (c *Client) Workspace(ctx context.Context, name string) (*engine.Workspace, error) {
	return release.LoadWorkspace(ctx, c.backend, name)
}

// Workspaces lists the workspaces: default first, then the stored ones.
func (c *Client) Workspaces(ctx context.Context) ([]string, error) {
	names, err := c.backend.ListWorkspaces(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{engine.DefaultWorkspace}
	for _, n := range names {
		if n != engine.DefaultWorkspace {
			out = append(out, n)
		}
	}
	return out, nil
}

// ParseWorkspaceFile reads a workspace file for the workspace called name.
func ParseWorkspaceFile(path, name string) (*engine.Workspace, error) {
	if err := backend.ValidateName("workspace", name); err != nil {
		return nil, err
	}
	data, err := input.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return generate.ParseWorkspace(data, path, name)
}

// CreateWorkspace stores a new workspace. The default workspace always exists:
// update it instead.
func (c *Client) CreateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	return c.auditOwn(ctx, "workspace create", "", ws.Name, "workspace "+ws.Name, c.createWorkspace(ctx, ws))
}

func (c *Client) createWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if ws.Name == engine.DefaultWorkspace {
		return errors.New("workspace default always exists: change it with `kumo workspace update default --file FILE`")
	}
	if err := c.checkWorkspaceSources(ctx, ws); err != nil {
		return err
	}
	err := c.backend.CreateWorkspace(ctx, ws)
	if errors.Is(err, backend.ErrExists) {
		return fmt.Errorf("workspace %s already exists: change it with `kumo workspace update %s --file FILE`", ws.Name, ws.Name)
	}
	return err
}

// UpdateWorkspace replaces an existing workspace (or the default one).
func (c *Client) UpdateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	return c.auditOwn(ctx, "workspace update", "", ws.Name, "workspace "+ws.Name, c.updateWorkspace(ctx, ws))
}

func (c *Client) updateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if ws.Name != engine.DefaultWorkspace {
		if _, err := c.backend.GetWorkspace(ctx, ws.Name); errors.Is(err, backend.ErrNotFound) {
			return fmt.Errorf("workspace %s does not exist: create it with `kumo workspace create %s --file FILE`", ws.Name, ws.Name)
		} else if err != nil {
			return err
		}
	}
	if err := c.checkWorkspaceSources(ctx, ws); err != nil {
		return err
	}
	return c.backend.PutWorkspace(ctx, ws)
}

// DeleteWorkspace removes a workspace. One that projects have releases in is
// kept unless force: its releases would lose their runtime settings.
func (c *Client) DeleteWorkspace(ctx context.Context, name string, force bool) error {
	return c.auditOwn(ctx, "workspace delete", "", name, "workspace "+name, c.deleteWorkspace(ctx, name, force))
}

func (c *Client) deleteWorkspace(ctx context.Context, name string, force bool) error {
	if name == engine.DefaultWorkspace {
		return errors.New("workspace default cannot be deleted (it always exists); empty it with `kumo workspace update default --file FILE`")
	}
	if _, err := c.backend.GetWorkspace(ctx, name); errors.Is(err, backend.ErrNotFound) {
		return fmt.Errorf("workspace %s does not exist", name)
	} else if err != nil {
		return err
	}
	projects, err := c.backend.ListProjects(ctx, name)
	if err != nil {
		return err
	}
	if len(projects) > 0 && !force {
		return fmt.Errorf("workspace %s has releases of project(s) %s: destroy them first, or delete the workspace anyway with --force (the releases stay)",
			name, strings.Join(projects, ", "))
	}
	if err := c.backend.DeleteWorkspace(ctx, name); err != nil {
		return err
	}
	if cur, _ := c.CurrentWorkspace(); cur == name {
		return os.Remove(filepath.Join(c.opts.Home, currentWorkspaceFile))
	}
	return nil
}

// CurrentWorkspace is the workspace chosen with SwitchWorkspace, else default.
func (c *Client) CurrentWorkspace() (string, error) {
	data, err := os.ReadFile(filepath.Join(c.opts.Home, currentWorkspaceFile))
	if errors.Is(err, os.ErrNotExist) {
		return engine.DefaultWorkspace, nil
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(data))
	if name == "" {
		return engine.DefaultWorkspace, nil
	}
	return name, nil
}

// SwitchWorkspace makes name the workspace commands use when none is given.
func (c *Client) SwitchWorkspace(ctx context.Context, name string) error {
	if _, err := c.Workspace(ctx, name); err != nil {
		return err
	}
	if err := os.MkdirAll(c.opts.Home, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.opts.Home, currentWorkspaceFile), []byte(name+"\n"), 0o600)
}

// Settings are the runtime settings a run in workspace is started with: the
// workspace's cluster and task queue, the cluster overridden by a non-empty
// value of flags. What only the workspace's administrators decide (the other
// clusters a resource may name, exec plugins, the terraform binary and
// mirror, provider sources) is not sent: the worker reads it from the stored
// workspace itself.
func (c *Client) Settings(ctx context.Context, workspace string, flags runspec.RuntimeSettings) (runspec.RuntimeSettings, error) {
	ws, err := c.Workspace(ctx, workspace)
	if err != nil {
		return flags, err
	}
	s := runspec.RuntimeSettings{
		Kubeconfig: ws.Runtimes.Kubernetes.Kubeconfig, Context: ws.Runtimes.Kubernetes.Context,
		TaskQueue: ws.Temporal.TaskQueue,
	}
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	override(&s.Kubeconfig, flags.Kubeconfig)
	override(&s.Context, flags.Context)
	return s, nil
}

// RunLog returns the log a run kept in the backend.
func (c *Client) RunLog(ctx context.Context, runID string) ([]byte, error) {
	log, err := c.backend.RunLog(ctx, runID)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, notFound("run %s has no log (only generate, apply, destroy and rollback runs keep one)", runID)
	}
	return log, err
}

// Log returns the run's log from the backend.
func (r *Run) Log(ctx context.Context) ([]byte, error) { return r.c.RunLog(ctx, r.RunID) }
