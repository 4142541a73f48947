package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// CreateWorkspace stores a new workspace with a create-only write; an existing one
// gives ErrExists.
func (s *Store) CreateWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encodeWorkspace("create", ws)
	if err != nil {
		return err
	}
	if _, err := s.write(ctx, workspaceKey(ws.Name), data, Condition{CreateOnly: true}); err != nil {
		return fmt.Errorf("create workspace %s: %w", ws.Name, err)
	}
	return nil
}

// PutWorkspace creates or replaces a workspace.
func (s *Store) PutWorkspace(ctx context.Context, ws *engine.Workspace) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encodeWorkspace("put", ws)
	if err != nil {
		return err
	}
	if _, err := s.write(ctx, workspaceKey(ws.Name), data, Condition{}); err != nil {
		return fmt.Errorf("put workspace %s: %w", ws.Name, err)
	}
	return nil
}

// GetWorkspace returns a stored workspace, or an error wrapping ErrNotFound.
func (s *Store) GetWorkspace(ctx context.Context, name string) (*engine.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateName("workspace", name); err != nil {
		return nil, fmt.Errorf("get workspace: %w", err)
	}
	key := workspaceKey(name)
	data, _, err := s.read(ctx, key, "workspace "+name)
	if err != nil {
		return nil, err
	}
	return decodeWorkspace(name, s.d.Where(key), data)
}

// ListWorkspaces returns the stored workspaces' names, sorted.
func (s *Store) ListWorkspaces(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := s.d.List(ctx, workspacesDir)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	names := []string{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name, yamlExt)
		if ok && !e.Dir && ValidateName("workspace", name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// DeleteWorkspace removes a stored workspace, or fails with ErrNotFound.
func (s *Store) DeleteWorkspace(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateName("workspace", name); err != nil {
		return fmt.Errorf("delete workspace: %w", err)
	}
	err := s.d.Delete(ctx, workspaceKey(name))
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete workspace %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete workspace %s: %w", name, err)
	}
	return nil
}
