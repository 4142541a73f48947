package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine/gitsource"
)

// Git sources and the state of their sync schedules:
//
//	sources/<name>.yaml                    one gitsource.Source
//	syncs/<project>/<workspace>.json       one gitsource.SyncState
const (
	sourcesDir = "sources"
	syncsDir   = "syncs"
)

func sourceKey(name string) string { return sourcesDir + "/" + name + yamlExt }

func syncKey(project, workspace string) string {
	return syncsDir + "/" + project + "/" + workspace + jsonExt
}

// PutSource stores a source; with create, only if no source has its name
// (ErrExists otherwise).
func (s *Store) PutSource(ctx context.Context, src *gitsource.Source, create bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if src == nil {
		return errors.New("put source: nil source")
	}
	if err := ValidateName("source", src.Name); err != nil {
		return fmt.Errorf("put source: %w", err)
	}
	if err := ValidateName("project", src.Project); err != nil {
		return fmt.Errorf("put source %s: %w", src.Name, err)
	}
	if err := src.Validate(); err != nil {
		return err
	}
	data, err := encodeYAML(src)
	if err != nil {
		return fmt.Errorf("put source %s: %w", src.Name, err)
	}
	if _, err := s.write(ctx, sourceKey(src.Name), data, Condition{CreateOnly: create}); err != nil {
		return fmt.Errorf("put source %s: %w", src.Name, err)
	}
	return nil
}

// GetSource returns a stored source, or an error wrapping ErrNotFound.
func (s *Store) GetSource(ctx context.Context, name string) (*gitsource.Source, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateName("source", name); err != nil {
		return nil, fmt.Errorf("get source: %w", err)
	}
	data, _, err := s.read(ctx, sourceKey(name), "source "+name)
	if err != nil {
		return nil, err
	}
	var src gitsource.Source
	if err := decodeYAML(data, &src); err != nil {
		return nil, fmt.Errorf("source %s (%s): %w", name, s.d.Where(sourceKey(name)), err)
	}
	if src.Name != name {
		return nil, fmt.Errorf("source %s (%s): the record names source %q", name, s.d.Where(sourceKey(name)), src.Name)
	}
	if err := src.Validate(); err != nil {
		return nil, fmt.Errorf("source %s (%s): %w", name, s.d.Where(sourceKey(name)), err)
	}
	return &src, nil
}

// ListSources returns the stored sources' names, sorted.
func (s *Store) ListSources(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := s.d.List(ctx, sourcesDir)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	names := []string{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name, yamlExt)
		if ok && !e.Dir && ValidateName("source", name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// DeleteSource removes a stored source, or fails with ErrNotFound.
func (s *Store) DeleteSource(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateName("source", name); err != nil {
		return fmt.Errorf("delete source: %w", err)
	}
	if err := s.d.Delete(ctx, sourceKey(name)); err != nil {
		return fmt.Errorf("delete source %s: %w", name, err)
	}
	return nil
}

// GetSyncState returns the sync state of a stack; a stack never synced has
// an empty one (no error).
func (s *Store) GetSyncState(ctx context.Context, project, workspace string) (*gitsource.SyncState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("sync state of %s/%s", project, workspace)
	data, _, err := s.read(ctx, syncKey(project, workspace), what)
	if errors.Is(err, ErrNotFound) {
		return &gitsource.SyncState{Project: project, Workspace: workspace}, nil
	}
	if err != nil {
		return nil, err
	}
	var st gitsource.SyncState
	if err := decodeJSON(data, &st); err != nil {
		return nil, fmt.Errorf("%s (%s): %w", what, s.d.Where(syncKey(project, workspace)), err)
	}
	return &st, nil
}

// PutSyncState stores the sync state of a stack.
func (s *Store) PutSyncState(ctx context.Context, st *gitsource.SyncState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateWorkspace(st.Project, st.Workspace); err != nil {
		return err
	}
	data, err := encodeJSON(st)
	if err != nil {
		return err
	}
	if _, err := s.write(ctx, syncKey(st.Project, st.Workspace), data, Condition{}); err != nil {
		return fmt.Errorf("put sync state of %s/%s: %w", st.Project, st.Workspace, err)
	}
	return nil
}
