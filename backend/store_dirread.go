package backend

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// listReleasesDir is ListReleases over a driver that reads a directory's
// objects in one request (backend/postgres: one query for any number of
// revisions, instead of one read per revision). The request is one snapshot,
// so a revision created meanwhile is either wholly in it or not at all.
func (s *Store) listReleasesDir(ctx context.Context, dr DirReader, project, workspace string) ([]*engine.Release, error) {
	dir := workspaceDir(project, workspace)
	objs, err := dr.ReadDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list releases of %s/%s: %w", project, workspace, err)
	}
	byRevision := make(map[int]Object, len(objs))
	for _, o := range objs {
		rev, err := strconv.Atoi(strings.TrimSuffix(o.Name, yamlExt))
		if err != nil || rev < 1 || strconv.Itoa(rev)+yamlExt != o.Name {
			continue // the .latest hint, not a release
		}
		byRevision[rev] = o
	}
	out := make([]*engine.Release, len(byRevision))
	err = forEach(ctx, len(out), func(_ context.Context, i int) error {
		key := ReleaseKey{Project: project, Workspace: workspace, Revision: i + 1}
		o, ok := byRevision[key.Revision]
		if !ok {
			return fmt.Errorf("list releases of %s/%s: revision %d is missing though %d revisions exist: %w (was %s removed by hand?)",
				project, workspace, key.Revision, len(out), ErrNotFound, s.d.Where(releaseKey(key)))
		}
		where := s.d.Where(releaseKey(key))
		r, err := decodeRelease(key, where, o.Data)
		if err != nil {
			return err
		}
		if err := s.openRelease(r, where); err != nil {
			return fmt.Errorf("release %s: %w", key, err)
		}
		r.Version = o.Version
		s.seen.add(key)
		out[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
