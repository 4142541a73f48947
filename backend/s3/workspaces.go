package s3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
	"github.com/kumoproj/kumo/engine"
)

const workspacesDir = "workspaces"

func (b *Backend) workspaceKey(name string) string { return b.key(workspacesDir, name+releaseExt) }

// CreateWorkspace stores a new workspace with a conditional write; an existing one
// gives backend.ErrExists.
func (b *Backend) CreateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := codec.EncodeWorkspace("create", ws)
	if err != nil {
		return err
	}
	_, err = b.put(ctx, b.workspaceKey(ws.Name), data, condition{ifNoneMatch: true})
	var pe *preconditionError
	if errors.As(err, &pe) {
		return fmt.Errorf("create workspace %s: %w (%s)", ws.Name, backend.ErrExists, b.where(b.workspaceKey(ws.Name)))
	}
	if err != nil {
		return fmt.Errorf("create workspace %s: %w", ws.Name, err)
	}
	return nil
}

// PutWorkspace creates or replaces a workspace.
func (b *Backend) PutWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := codec.EncodeWorkspace("put", ws)
	if err != nil {
		return err
	}
	if _, err := b.put(ctx, b.workspaceKey(ws.Name), data, condition{}); err != nil {
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
	key := b.workspaceKey(name)
	data, _, err := b.get(ctx, key)
	if errors.Is(err, errNoObject) {
		return nil, fmt.Errorf("workspace %s: %w", name, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", name, err)
	}
	return codec.DecodeWorkspace(name, b.where(key), data)
}

// ListWorkspaces returns the stored workspaces' names, sorted.
func (b *Backend) ListWorkspaces(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := b.key(workspacesDir) + "/"
	names := []string{}
	err := b.list(ctx, prefix, "/", func(k string, dir bool) error {
		name, ok := strings.CutSuffix(strings.TrimPrefix(k, prefix), releaseExt)
		if ok && !dir && backend.ValidateName("workspace", name) == nil {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
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
	key := b.workspaceKey(name)
	// S3 deletes a missing key without complaint: look first.
	_, ok, err := b.head(ctx, key)
	if err != nil {
		return fmt.Errorf("delete workspace %s: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("delete workspace %s: %w", name, backend.ErrNotFound)
	}
	if err := b.deleteKeys(ctx, []string{key}); err != nil {
		return fmt.Errorf("delete workspace %s: %w", name, err)
	}
	return nil
}
