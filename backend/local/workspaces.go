package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
	"github.com/kumoproj/kumo/engine"
)

const workspacesDir = "workspaces"

func (b *Backend) workspacePath(name string) string {
	return filepath.Join(b.root, workspacesDir, name+releaseExt)
}

func (b *Backend) encodeWorkspace(op string, ws *engine.Workspace) (string, []byte, error) {
	data, err := codec.EncodeWorkspace(op, ws)
	if err != nil {
		return "", nil, err
	}
	path := b.workspacePath(ws.Name)
	if err := ensureDir(b.root, filepath.Dir(path)); err != nil {
		return "", nil, fmt.Errorf("%s workspace %s: %w", op, ws.Name, err)
	}
	b.written.Add(int64(len(data)))
	return path, data, nil
}

// CreateWorkspace stores a new workspace; an existing one gives backend.ErrExists.
func (b *Backend) CreateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, data, err := b.encodeWorkspace("create", ws)
	if err != nil {
		return err
	}
	if err := createFile(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create workspace %s: %w", ws.Name, backend.ErrExists)
		}
		return fmt.Errorf("create workspace %s: %w", ws.Name, err)
	}
	return nil
}

// PutWorkspace creates or replaces a workspace.
func (b *Backend) PutWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, data, err := b.encodeWorkspace("put", ws)
	if err != nil {
		return err
	}
	if err := replaceFile(path, data); err != nil {
		return fmt.Errorf("put workspace %s: %w", ws.Name, err)
	}
	return nil
}

// GetWorkspace returns a stored workspace, or an error wrapping backend.ErrNotFound.
func (b *Backend) GetWorkspace(ctx context.Context, name string) (*engine.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.ValidateName("workspace", name); err != nil {
		return nil, fmt.Errorf("get workspace: %w", err)
	}
	path := b.workspacePath(name)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("workspace %s: %w", name, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", name, err)
	}
	return codec.DecodeWorkspace(name, path, data)
}

// ListWorkspaces returns the stored workspaces' names, sorted.
func (b *Backend) ListWorkspaces(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := filepath.Join(b.root, workspacesDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	names := []string{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), releaseExt)
		if !ok || !e.Type().IsRegular() || backend.ValidateName("workspace", name) != nil {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// DeleteWorkspace removes a stored workspace, or fails with backend.ErrNotFound.
func (b *Backend) DeleteWorkspace(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := backend.ValidateName("workspace", name); err != nil {
		return fmt.Errorf("delete workspace: %w", err)
	}
	path := b.workspacePath(name)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete workspace %s: %w", name, backend.ErrNotFound)
		}
		return fmt.Errorf("delete workspace %s: %w", name, err)
	}
	return syncDir(filepath.Dir(path))
}

// ListProjects returns, sorted, the projects with at least one release in workspace.
func (b *Backend) ListProjects(ctx context.Context, workspace string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	ents, err := os.ReadDir(filepath.Join(b.root, releasesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	projects := []string{}
	for _, e := range ents {
		if !e.IsDir() || backend.ValidateName("project", e.Name()) != nil {
			continue
		}
		revs, err := b.revisions(e.Name(), workspace)
		if err != nil {
			return nil, fmt.Errorf("list projects of workspace %s: %w", workspace, err)
		}
		if len(revs) > 0 {
			projects = append(projects, e.Name())
		}
	}
	return projects, nil
}
