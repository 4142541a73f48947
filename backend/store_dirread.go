package backend

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// releaseObjects reads every kept release file of a workspace (from its
// floor, store_floor.go) with one request of a driver that reads a
// directory's objects at once (backend/postgres: one query for any number of
// revisions, instead of one read per revision), in revision order, and
// returns them with the floor. The request is one snapshot, so a revision
// created meanwhile is either wholly in it or not at all, and the floor it
// holds is the one its revisions are gapless from.
func (s *Store) releaseObjects(ctx context.Context, dr DirReader, project, workspace string) ([]Object, int, error) {
	objs, err := dr.ReadDir(ctx, workspaceDir(project, workspace))
	if err != nil {
		return nil, 0, fmt.Errorf("list releases of %s/%s: %w", project, workspace, err)
	}
	floor := 1
	byRevision := make(map[int]Object, len(objs))
	for _, o := range objs {
		if o.Name == floorMark {
			if floor, err = parseFloor(o.Data); err != nil {
				return nil, 0, fmt.Errorf("list releases of %s/%s: oldest kept revision: %s %w", project, workspace, s.d.Where(floorKey(project, workspace)), err)
			}
			continue
		}
		rev, err := strconv.Atoi(strings.TrimSuffix(o.Name, yamlExt))
		if err != nil || rev < 1 || strconv.Itoa(rev)+yamlExt != o.Name {
			continue // the .latest hint, chunks: not a release
		}
		byRevision[rev] = o
	}
	latest := 0
	for rev := range byRevision {
		if rev >= floor {
			latest = max(latest, rev)
		}
	}
	var out []Object
	if latest > 0 {
		out = make([]Object, latest-floor+1)
	}
	for i := range out {
		key := ReleaseKey{Project: project, Workspace: workspace, Revision: floor + i}
		o, ok := byRevision[key.Revision]
		if !ok {
			return nil, 0, fmt.Errorf("list releases of %s/%s: revision %d is missing though revisions %d to %d are kept: %w (was %s removed by hand?)",
				project, workspace, key.Revision, floor, latest, ErrNotFound, s.d.Where(releaseKey(key)))
		}
		out[i] = o
	}
	return out, floor, nil
}

// listReleasesDir is ListReleases over a DirReader.
func (s *Store) listReleasesDir(ctx context.Context, dr DirReader, project, workspace string) ([]*engine.Release, error) {
	objs, floor, err := s.releaseObjects(ctx, dr, project, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]*engine.Release, len(objs))
	err = forEach(ctx, len(out), func(ctx context.Context, i int) error {
		key := ReleaseKey{Project: project, Workspace: workspace, Revision: floor + i}
		r, err := s.decodeReleaseFile(ctx, key, s.d.Where(releaseKey(key)), objs[i].Data)
		if err != nil {
			return err
		}
		r.Version = objs[i].Version
		s.seen.add(key)
		out[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listSummariesDir is ListReleaseSummaries over a DirReader.
func (s *Store) listSummariesDir(ctx context.Context, dr DirReader, project, workspace string) ([]ReleaseSummary, error) {
	objs, floor, err := s.releaseObjects(ctx, dr, project, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]ReleaseSummary, len(objs))
	for i, o := range objs {
		key := ReleaseKey{Project: project, Workspace: workspace, Revision: floor + i}
		sum, err := s.summarize(key, s.d.Where(releaseKey(key)), o.Data)
		if err != nil {
			return nil, err
		}
		sum.Release.Version = o.Version
		out[i] = sum
	}
	return out, nil
}
