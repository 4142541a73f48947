package s3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
	"github.com/kumoproj/kumo/engine"
)

const (
	releasesDir = "releases"
	releaseExt  = ".yaml"
	stateExt    = ".state"
	latestHint  = ".latest"
)

func (b *Backend) releaseKey(k backend.ReleaseKey) string {
	return b.key(releasesDir, k.Project, k.Workspace, strconv.Itoa(k.Revision)+releaseExt)
}

func (b *Backend) hintKey(project, workspace string) string {
	return b.key(releasesDir, project, workspace, latestHint)
}

func validateWorkspace(project, workspace string) error {
	if err := backend.ValidateName("project", project); err != nil {
		return err
	}
	return backend.ValidateName("workspace", workspace)
}

// CreateRelease stores r as revision latest+1 with a conditional write, so that of
// concurrent creators exactly one succeeds; the others get
// backend.ErrRevisionExists. A revision that would leave a gap is refused.
func (b *Backend) CreateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, data, err := codec.EncodeRelease("create", r)
	if err != nil {
		return err
	}
	if r.Revision > 1 {
		// Releases are never deleted, so once revision N-1 exists, N leaves no gap.
		prev := key
		prev.Revision--
		_, ok, err := b.head(ctx, b.releaseKey(prev))
		if err != nil {
			return fmt.Errorf("create release %s: %w", key, err)
		}
		if !ok {
			return b.gapError(ctx, key)
		}
	}
	etag, err := b.put(ctx, b.releaseKey(key), data, condition{ifNoneMatch: true})
	var pe *preconditionError
	if errors.As(err, &pe) {
		return fmt.Errorf("create release %s: %w (%s exists)", key, backend.ErrRevisionExists, b.where(b.releaseKey(key)))
	}
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	r.Version = etag
	b.seen.add(key)
	// The hint only saves requests; a lost or out-of-order hint write is corrected
	// by probing (see latestRevision), so its failure does not fail the create.
	_, _ = b.put(ctx, b.hintKey(key.Project, key.Workspace), []byte(strconv.Itoa(key.Revision)), condition{})
	return nil
}

// gapError explains a create whose previous revision does not exist.
func (b *Backend) gapError(ctx context.Context, key backend.ReleaseKey) error {
	latest, err := b.latestRevision(ctx, key.Project, key.Workspace)
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	if key.Revision <= latest {
		// Only reachable if an object was removed by hand.
		return fmt.Errorf("create release %s: %w (latest revision is %d)", key, backend.ErrRevisionExists, latest)
	}
	return fmt.Errorf("create release %s: revision %d would leave a gap: the latest revision of %s/%s is %d, so the next one must be %d",
		key, key.Revision, key.Project, key.Workspace, latest, latest+1)
}

// UpdateRelease replaces an existing revision if it is still the copy r was read as:
// the write carries If-Match with r.Version (the ETag). A missing release gives
// backend.ErrNotFound, a changed one backend.ErrConflict.
func (b *Backend) UpdateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, data, err := codec.EncodeRelease("update", r)
	if err != nil {
		return err
	}
	objKey := b.releaseKey(key)
	if r.Version == "" {
		_, ok, err := b.head(ctx, objKey)
		if err != nil {
			return fmt.Errorf("update release %s: %w", key, err)
		}
		if !ok {
			return fmt.Errorf("update release %s: %w", key, backend.ErrNotFound)
		}
		return fmt.Errorf("update release %s: the release has no version: read it from the backend before updating it", key)
	}
	etag, err := b.put(ctx, objKey, data, condition{ifMatch: r.Version})
	var pe *preconditionError
	switch {
	case errors.As(err, &pe) && !pe.exists:
		return fmt.Errorf("update release %s: %w", key, backend.ErrNotFound)
	case errors.As(err, &pe):
		return fmt.Errorf("update release %s: %w (read as version %s, stored version is %s)", key, backend.ErrConflict, r.Version, pe.etag)
	case err != nil:
		return fmt.Errorf("update release %s: %w", key, err)
	}
	r.Version = etag
	return nil
}

// GetRelease returns one revision, or an error wrapping backend.ErrNotFound.
func (b *Backend) GetRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: revision}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("get release: %w", err)
	}
	if revision < 1 {
		return nil, fmt.Errorf("get release %s: %w", key, backend.ErrNotFound)
	}
	return b.readRelease(ctx, key)
}

func (b *Backend) readRelease(ctx context.Context, key backend.ReleaseKey) (*engine.Release, error) {
	objKey := b.releaseKey(key)
	data, etag, err := b.get(ctx, objKey)
	if errors.Is(err, errNoObject) {
		return nil, fmt.Errorf("release %s: %w", key, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	r, err := codec.DecodeRelease(key, b.where(objKey), data)
	if err != nil {
		return nil, err
	}
	r.Version = etag
	b.seen.add(key)
	return r, nil
}

// LatestRelease returns the highest revision, or an error wrapping
// backend.ErrNotFound when there is none. It lists nothing (see latestRevision).
func (b *Backend) LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("latest release: %w", err)
	}
	// Usually the hint is right: read the revision it names, and make sure the
	// next one does not exist.
	lo := 0
	if h := b.readHint(ctx, project, workspace); h > 0 {
		key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: h}
		r, err := b.readRelease(ctx, key)
		switch {
		case errors.Is(err, backend.ErrNotFound):
			// A hint naming a revision that is not there: ignore it.
		case err != nil:
			return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, err)
		default:
			ok, err := b.revisionExists(ctx, project, workspace, h+1)
			if err != nil {
				return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, err)
			}
			if !ok {
				return r, nil
			}
			lo = h + 1
		}
	}
	latest, err := b.probeLatest(ctx, project, workspace, lo)
	if err != nil {
		return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, err)
	}
	if latest == 0 {
		return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, backend.ErrNotFound)
	}
	return b.readRelease(ctx, backend.ReleaseKey{Project: project, Workspace: workspace, Revision: latest})
}

// readHint returns the revision the .latest hint names, or 0 when it is missing or
// unreadable (it is only a starting point).
func (b *Backend) readHint(ctx context.Context, project, workspace string) int {
	data, _, err := b.get(ctx, b.hintKey(project, workspace))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

func (b *Backend) revisionExists(ctx context.Context, project, workspace string, revision int) (bool, error) {
	_, ok, err := b.head(ctx, b.releaseKey(backend.ReleaseKey{Project: project, Workspace: workspace, Revision: revision}))
	return ok, err
}

// latestRevision finds the highest revision (0: none) without listing, starting
// from the hint when it names an existing revision.
func (b *Backend) latestRevision(ctx context.Context, project, workspace string) (int, error) {
	lo := 0
	if h := b.readHint(ctx, project, workspace); h > 0 {
		ok, err := b.revisionExists(ctx, project, workspace, h)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = h
		}
	}
	return b.probeLatest(ctx, project, workspace, lo)
}

// probeLatest finds the highest revision given lo, a revision known to exist (0:
// none known). Revisions are gapless, so "revision n exists" is true up to the
// latest and false after: it gallops upward (lo+1, lo+2, lo+4, ...) until a
// revision is missing, then bisects. That is a handful of HEAD requests however
// many revisions there are, and one when lo is the latest.
func (b *Backend) probeLatest(ctx context.Context, project, workspace string, lo int) (int, error) {
	hi := 0 // lowest revision known to be missing
	for step := 1; hi == 0; step *= 2 {
		ok, err := b.revisionExists(ctx, project, workspace, lo+step)
		if err != nil {
			return 0, err
		}
		if ok {
			lo += step
		} else {
			hi = lo + step
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := b.revisionExists(ctx, project, workspace, mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// ListReleases returns every revision in ascending order; none gives an empty list.
// The revisions are found without listing and read a bounded number at a time.
func (b *Backend) ListReleases(ctx context.Context, project, workspace string) ([]*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	latest, err := b.latestRevision(ctx, project, workspace)
	if err != nil {
		return nil, fmt.Errorf("list releases of %s/%s: %w", project, workspace, err)
	}
	out := make([]*engine.Release, latest)
	err = forEach(ctx, latest, func(ctx context.Context, i int) error {
		r, err := b.readRelease(ctx, backend.ReleaseKey{Project: project, Workspace: workspace, Revision: i + 1})
		out[i] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seenReleases remembers a few releases known to exist, so that recording each
// resource of a running release does not ask the store again (releases are never
// deleted). It is bounded: it forgets everything when full.
type seenReleases struct {
	mu   sync.Mutex
	keys map[backend.ReleaseKey]struct{}
}

const seenLimit = 256

func (s *seenReleases) add(k backend.ReleaseKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil || len(s.keys) >= seenLimit {
		s.keys = map[backend.ReleaseKey]struct{}{}
	}
	s.keys[k] = struct{}{}
}

func (s *seenReleases) has(k backend.ReleaseKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[k]
	return ok
}

// ListProjects returns, sorted, the projects with at least one release in
// workspace. It lists the project "directories" and asks, for each, whether
// revision 1 exists: revisions are gapless, so that is whether any does.
func (b *Backend) ListProjects(ctx context.Context, workspace string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	prefix := b.key(releasesDir) + "/"
	var candidates []string
	err := b.list(ctx, prefix, "/", func(k string, dir bool) error {
		name := strings.TrimSuffix(strings.TrimPrefix(k, prefix), "/")
		if dir && backend.ValidateName("project", name) == nil {
			candidates = append(candidates, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list projects of workspace %s: %w", workspace, err)
	}
	has := make([]bool, len(candidates))
	err = forEach(ctx, len(candidates), func(ctx context.Context, i int) error {
		ok, err := b.revisionExists(ctx, candidates[i], workspace, 1)
		has[i] = ok
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list projects of workspace %s: %w", workspace, err)
	}
	projects := []string{}
	for i, p := range candidates {
		if has[i] {
			projects = append(projects, p)
		}
	}
	slices.Sort(projects)
	return projects, nil
}
