package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/engine/drift"
)

// Drift reports are kept per project+workspace, one object per check, named so
// that names sort by check time and still say which run made them:
//
//	drift/<project>/<workspace>/<check time, UnixNano, 20 digits>_<run ID>.json

func driftDir(project, workspace string) string { return driftRoot + "/" + project + "/" + workspace }

func driftKey(r *drift.Report) string {
	return fmt.Sprintf("%s/%020d_%s%s", driftDir(r.Project, r.Workspace), r.CheckTime.UnixNano(), r.RunID, jsonExt)
}

// PutDriftReport stores one check's report, then deletes the oldest reports of
// the stack beyond keep (keep <= 0: drift.DefaultKeep). Putting the same check
// again replaces it.
func (s *Store) PutDriftReport(ctx context.Context, r *drift.Report, keep int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r == nil {
		return errors.New("put drift report: nil report")
	}
	if err := validateWorkspace(r.Project, r.Workspace); err != nil {
		return err
	}
	if err := ValidateName("run", r.RunID); err != nil {
		return fmt.Errorf("drift report: %w", err)
	}
	if r.CheckTime.IsZero() || r.CheckTime.UnixNano() < 0 {
		return fmt.Errorf("drift report of %s/%s: no check time", r.Project, r.Workspace)
	}
	data, err := encodeJSON(r)
	if err != nil {
		return fmt.Errorf("drift report of %s/%s: %w", r.Project, r.Workspace, err)
	}
	if _, err := s.write(ctx, driftKey(r), data, Condition{}); err != nil {
		return fmt.Errorf("put drift report %s of %s/%s: %w", r.RunID, r.Project, r.Workspace, err)
	}
	if keep <= 0 {
		keep = drift.DefaultKeep
	}
	names, err := s.driftNames(ctx, r.Project, r.Workspace)
	if err != nil {
		return err
	}
	for _, n := range names[:max(0, len(names)-keep)] {
		if err := s.d.Delete(ctx, driftDir(r.Project, r.Workspace)+"/"+n); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("prune drift reports of %s/%s: %w", r.Project, r.Workspace, err)
		}
	}
	return nil
}

// DriftReport returns the report of the check runID made, or, with runID "",
// the latest one; ErrNotFound when there is none.
func (s *Store) DriftReport(ctx context.Context, project, workspace, runID string) (*drift.Report, error) {
	names, err := s.driftNames(ctx, project, workspace)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("drift report of %s/%s", project, workspace)
	if runID != "" {
		what = fmt.Sprintf("drift report of run %s in %s/%s", runID, project, workspace)
		names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, "_"+runID+jsonExt) })
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	data, _, err := s.read(ctx, driftDir(project, workspace)+"/"+names[len(names)-1], what)
	if err != nil {
		return nil, err
	}
	var r drift.Report
	if err := decodeJSON(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &r, nil
}

// DriftReports returns the stored reports of a stack, oldest first.
func (s *Store) DriftReports(ctx context.Context, project, workspace string) ([]*drift.Report, error) {
	names, err := s.driftNames(ctx, project, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]*drift.Report, len(names))
	err = forEach(ctx, len(names), func(ctx context.Context, i int) error {
		data, _, err := s.read(ctx, driftDir(project, workspace)+"/"+names[i], "drift report "+names[i])
		if err != nil {
			return err
		}
		out[i] = &drift.Report{}
		return decodeJSON(data, out[i])
	})
	if err != nil {
		return nil, fmt.Errorf("drift reports of %s/%s: %w", project, workspace, err)
	}
	return slices.DeleteFunc(out, func(r *drift.Report) bool { return r == nil }), nil
}

// driftNames checks the context and the names, and lists the report objects of
// a stack, oldest first.
func (s *Store) driftNames(ctx context.Context, project, workspace string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, err
	}
	ents, err := s.d.List(ctx, driftDir(project, workspace))
	if err != nil {
		return nil, fmt.Errorf("drift reports of %s/%s: %w", project, workspace, err)
	}
	var names []string
	for _, e := range ents {
		stamp, _, ok := strings.Cut(e.Name, "_")
		if _, err := strconv.ParseUint(stamp, 10, 64); ok && err == nil && !e.Dir && strings.HasSuffix(e.Name, jsonExt) {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
