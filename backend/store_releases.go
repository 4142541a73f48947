package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// CreateRelease stores r as revision latest+1 with a create-only write, so that of
// concurrent creators exactly one succeeds; the others get ErrRevisionExists.
// Only revisions under the floor are ever deleted (store_floor.go), and never
// the latest, so once revision N-1 exists, N leaves no gap; a revision whose
// predecessor does not exist is refused, and one under the floor is taken
// (ErrRevisionExists): the release history limit removed it.
func (s *Store) CreateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, err := checkRelease("create", r)
	if err != nil {
		return err
	}
	floor, _, err := s.readFloor(ctx, key.Project, key.Workspace)
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	if key.Revision < floor {
		return fmt.Errorf("create release %s: %w (it is under the oldest kept revision %d of %s/%s: the release history limit removed it)",
			key, ErrRevisionExists, floor, key.Project, key.Workspace)
	}
	if key.Revision > 1 {
		prev := key
		prev.Revision--
		ok, err := s.releaseExists(ctx, prev)
		if err != nil {
			return fmt.Errorf("create release %s: %w", key, err)
		}
		if !ok {
			return s.gapError(ctx, key)
		}
	}
	// The spec and the state chunks are written first: a release file is
	// never there before what it names. (If the create then loses a race, they
	// stay unreferenced, named by their content.)
	_, data, found, err := s.encodeRecord(ctx, "create", r, key.Revision-1)
	if err != nil {
		return err
	}
	objKey := releaseKey(key)
	version, err := s.write(ctx, objKey, data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		return fmt.Errorf("create release %s: %w (%s exists)", key, ErrRevisionExists, s.d.Where(objKey))
	}
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	r.Version = version
	s.seen.add(key)
	if err := s.keepReused(ctx, key, found); err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	// The hint only saves reads; a lost or out-of-order hint write is corrected by
	// probing (see latestRevision), so its failure does not fail the create.
	_, _ = s.write(ctx, hintKey(key.Project, key.Workspace), []byte(strconv.Itoa(key.Revision)), Condition{})
	return nil
}

// gapError explains a create whose previous revision does not exist.
func (s *Store) gapError(ctx context.Context, key ReleaseKey) error {
	latest, err := s.latestRevision(ctx, key.Project, key.Workspace)
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	if key.Revision <= latest {
		// Only reachable if a revision above the floor was removed by hand.
		return fmt.Errorf("create release %s: %w (latest revision is %d)", key, ErrRevisionExists, latest)
	}
	return fmt.Errorf("create release %s: revision %d would leave a gap: the latest revision of %s/%s is %d, so the next one must be %d",
		key, key.Revision, key.Project, key.Workspace, latest, latest+1)
}

// UpdateRelease replaces an existing revision if it is still the copy r was read
// as (the write is conditional on r.Version). A missing release gives ErrNotFound,
// a changed one ErrConflict.
func (s *Store) UpdateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, err := checkRelease("update", r)
	if err != nil {
		return err
	}
	objKey := releaseKey(key)
	if r.Version == "" {
		ok, err := s.d.Exists(ctx, objKey)
		if err != nil {
			return fmt.Errorf("update release %s: %w", key, err)
		}
		if !ok {
			return fmt.Errorf("update release %s: %w", key, ErrNotFound)
		}
		return fmt.Errorf("update release %s: the release has no version: read it from the backend before updating it", key)
	}
	// The copy being replaced and the previous revision: their chunks are
	// referenced again where the state did not change.
	_, data, found, err := s.encodeRecord(ctx, "update", r, key.Revision, key.Revision-1)
	if err != nil {
		return err
	}
	version, err := s.write(ctx, objKey, data, Condition{IfVersion: r.Version})
	switch {
	case errors.Is(err, ErrConflict):
		return fmt.Errorf("update release %s (read as version %s): %w", key, r.Version, err)
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("update release %s: %w", key, ErrNotFound)
	case err != nil:
		return fmt.Errorf("update release %s: %w", key, err)
	}
	r.Version = version
	if err := s.keepReused(ctx, key, found); err != nil {
		return fmt.Errorf("update release %s: %w", key, err)
	}
	return nil
}

// GetRelease returns one revision, or an error wrapping ErrNotFound: for a
// revision under the floor, one that names it and the oldest kept revision.
func (s *Store) GetRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("get release: %w", err)
	}
	key := ReleaseKey{Project: project, Workspace: workspace, Revision: revision}
	if revision < 1 {
		return nil, fmt.Errorf("get release %s: %w", key, ErrNotFound)
	}
	// A revision under the floor is removed, though a collection that
	// stopped half-way may have left its file.
	floor, _, err := s.readFloor(ctx, project, workspace)
	if err != nil {
		return nil, fmt.Errorf("get release %s: %w", key, err)
	}
	if revision < floor {
		return nil, prunedError("get release", key, floor)
	}
	r, err := s.readRelease(ctx, key)
	if errors.Is(err, ErrNotFound) {
		// Removed while it was read: say so.
		if floor, _, ferr := s.readFloor(ctx, project, workspace); ferr == nil && revision < floor {
			return nil, prunedError("get release", key, floor)
		}
	}
	return r, err
}

func (s *Store) readRelease(ctx context.Context, key ReleaseKey) (*engine.Release, error) {
	objKey := releaseKey(key)
	data, version, err := s.read(ctx, objKey, "release "+key.String())
	if err != nil {
		return nil, err
	}
	r, err := s.decodeReleaseFile(ctx, key, s.d.Where(objKey), data)
	if err != nil {
		return nil, err
	}
	r.Version = version
	s.seen.add(key)
	return r, nil
}

// releaseExists reports whether a revision exists, asking the driver only about
// releases not seen yet.
func (s *Store) releaseExists(ctx context.Context, key ReleaseKey) (bool, error) {
	if s.seen.has(key) {
		return true, nil
	}
	ok, err := s.d.Exists(ctx, releaseKey(key))
	if ok {
		s.seen.add(key)
	}
	return ok, err
}

// LatestRelease returns the highest revision, or an error wrapping ErrNotFound
// when there is none. It lists nothing (see latestRevision): with a current hint
// it is four driver calls however many revisions there are.
func (s *Store) LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error) {
	return latestOf(ctx, s, project, workspace, "latest release", s.readRelease)
}

// ReleaseHead is what a release says of itself without its spec and state:
// enough to decide on it (is there anything to destroy?) without decoding
// every resource it records.
type ReleaseHead struct {
	Revision  int              `json:"revision"`
	Phase     engine.Phase     `json:"phase"`
	Operation engine.Operation `json:"operation"`
	Stack     string           `json:"stack,omitempty"`
	SpecHash  string           `json:"specHash"`
	// RunID names the Temporal run that owns the release.
	RunID string `json:"runID,omitempty"`
	// Resources is how many resources the release's state records.
	Resources int `json:"-"`
}

// LatestReleaseHead is LatestRelease's head: the release file is read but
// its resources are only counted, not decoded (a release of 50,000 took
// about 240 MB to decode whole).
func (s *Store) LatestReleaseHead(ctx context.Context, project, workspace string) (ReleaseHead, error) {
	return latestOf(ctx, s, project, workspace, "latest release head", s.readReleaseHead)
}

func (s *Store) readReleaseHead(ctx context.Context, key ReleaseKey) (ReleaseHead, error) {
	objKey := releaseKey(key)
	data, _, err := s.read(ctx, objKey, "release "+key.String())
	if err != nil {
		return ReleaseHead{}, err
	}
	h, err := decodeReleaseHead(key, s.d.Where(objKey), data)
	if err != nil {
		return ReleaseHead{}, err
	}
	s.seen.add(key)
	return h, nil
}

// latestOf reads, with read, the highest revision of project/workspace, or
// fails wrapping ErrNotFound when there is none (what names the call in
// errors).
func latestOf[T any](ctx context.Context, s *Store, project, workspace, what string, read func(context.Context, ReleaseKey) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	// Usually the hint is right: read the revision it names, and make sure the
	// next one does not exist.
	lo := 0
	if h := s.readHint(ctx, project, workspace); h > 0 {
		r, err := read(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: h})
		switch {
		case errors.Is(err, ErrNotFound):
			// A hint naming a revision that is not there: ignore it.
		case err != nil:
			return zero, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
		default:
			ok, err := s.d.Exists(ctx, releaseKey(ReleaseKey{Project: project, Workspace: workspace, Revision: h + 1}))
			if err != nil {
				return zero, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
			}
			if ok {
				lo = h + 1
				break
			}
			// h+1 is missing: h is the latest unless a collection removed
			// h+1 under the floor (a hint left far behind). The floor read
			// after the check says which: nothing at or over it is removed.
			floor, _, err := s.readFloor(ctx, project, workspace)
			if err != nil {
				return zero, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
			}
			if h >= floor {
				return r, nil
			}
		}
	}
	_, latest, err := s.probeLatest(ctx, project, workspace, lo)
	if err != nil {
		return zero, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
	}
	if latest == 0 {
		return zero, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, ErrNotFound)
	}
	return read(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: latest})
}

// readHint returns the revision the .latest hint names, or 0 when it is missing or
// unreadable (it is only a starting point).
func (s *Store) readHint(ctx context.Context, project, workspace string) int {
	data, _, err := s.d.Read(ctx, hintKey(project, workspace))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// latestRevision finds the highest revision (0: none) without listing, starting
// from the hint when it names an existing revision.
func (s *Store) latestRevision(ctx context.Context, project, workspace string) (int, error) {
	_, latest, err := s.keptRange(ctx, project, workspace)
	return latest, err
}

// keptRange returns the floor and the latest revision (0: none) of
// project/workspace: the revisions a reader reads.
func (s *Store) keptRange(ctx context.Context, project, workspace string) (floor, latest int, err error) {
	lo := 0
	if h := s.readHint(ctx, project, workspace); h > 0 {
		ok, err := s.releaseExists(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: h})
		if err != nil {
			return 0, 0, err
		}
		if ok {
			lo = h
		}
	}
	return s.probeLatest(ctx, project, workspace, lo)
}

// probeLatest finds the highest revision (0: none) given lo, a revision known
// to have existed (0: none known), and returns it with the floor. It gallops
// from the floor or lo, whichever is higher (see gallop). A collection
// removes revisions only under the floor it raised first, so when the floor
// read after the gallop is the one read before, or is still under what the
// gallop found, no revision the gallop found missing was removed meanwhile;
// otherwise it starts again from the new floor.
func (s *Store) probeLatest(ctx context.Context, project, workspace string, lo int) (floor, latest int, err error) {
	if floor, _, err = s.readFloor(ctx, project, workspace); err != nil {
		return 0, 0, err
	}
	for range floorMaxTries {
		if latest, err = s.gallop(ctx, project, workspace, max(lo, floor-1)); err != nil {
			return 0, 0, err
		}
		after, _, err := s.readFloor(ctx, project, workspace)
		if err != nil {
			return 0, 0, err
		}
		if after == floor {
			if latest < floor {
				latest = 0 // not even the floor's revision: none
			}
			return floor, latest, nil
		}
		if latest >= after {
			// Every revision the gallop found missing is over the new
			// floor: none of them was removed, so latest was the latest.
			return after, latest, nil
		}
		floor = after
	}
	return 0, 0, fmt.Errorf("the oldest kept revision of %s/%s kept rising while its latest revision was looked for (%d tries)", project, workspace, floorMaxTries)
}

// gallop finds the highest revision given lo, a revision taken to exist (the
// floor's predecessor when none is known). Revisions are gapless from the
// floor, so "revision n exists" is true up to the latest and false after: it
// gallops upward (lo+1, lo+2, lo+4, ...) until a revision is missing, then
// bisects. That is a handful of existence checks however many revisions
// there are, and one when lo is the latest. (Listing would cost a request per
// thousand revisions on an object store, and reads every name of a directory
// on a file system.)
func (s *Store) gallop(ctx context.Context, project, workspace string, lo int) (int, error) {
	exists := func(rev int) (bool, error) {
		return s.d.Exists(ctx, releaseKey(ReleaseKey{Project: project, Workspace: workspace, Revision: rev}))
	}
	hi := 0 // lowest revision known to be missing
	for step := 1; hi == 0; step *= 2 {
		ok, err := exists(lo + step)
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
		ok, err := exists(mid)
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

// readKept reads, with read, every kept revision of project/workspace (from
// the floor to the latest) in ascending order, a bounded number at a time
// (what names the call in errors). A revision that is gone by the time it is
// read was removed by a collection that raised the floor past it meanwhile:
// what was read from the new floor on is kept, and only what it lacks is
// read, so a reader finishes however often collections run beside it.
func readKept[T any](ctx context.Context, s *Store, project, workspace, what string, read func(context.Context, ReleaseKey) (T, error)) ([]T, error) {
	floor, latest, err := s.keptRange(ctx, project, workspace)
	if err != nil {
		return nil, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
	}
	got := map[int]T{}
	for range floorMaxTries {
		var todo []int
		for rev := floor; rev <= latest; rev++ {
			if _, ok := got[rev]; !ok {
				todo = append(todo, rev)
			}
		}
		out := make([]T, len(todo))
		gone := make([]error, len(todo))
		err := forEach(ctx, len(todo), func(ctx context.Context, i int) error {
			r, err := read(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: todo[i]})
			if errors.Is(err, ErrNotFound) {
				gone[i] = err
				return nil
			}
			out[i] = r
			return err
		})
		if err != nil {
			return nil, err
		}
		var missing error
		for i, rev := range todo {
			if gone[i] == nil {
				got[rev] = out[i]
			} else if missing == nil {
				missing = gone[i]
			}
		}
		if missing == nil {
			kept := make([]T, 0, len(got))
			for rev := floor; rev <= latest; rev++ {
				kept = append(kept, got[rev])
			}
			return kept, nil
		}
		after, _, err := s.readFloor(ctx, project, workspace)
		if err != nil {
			return nil, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
		}
		if after == floor {
			return nil, missing // a revision above the floor is missing
		}
		for rev := range got {
			if rev < after {
				delete(got, rev)
			}
		}
		if floor = after; floor > latest {
			if floor, latest, err = s.keptRange(ctx, project, workspace); err != nil {
				return nil, fmt.Errorf("%s of %s/%s: %w", what, project, workspace, err)
			}
		}
	}
	return nil, fmt.Errorf("%s of %s/%s: its oldest kept revision kept rising while they were read (%d tries)", what, project, workspace, floorMaxTries)
}

// ListReleases returns every kept revision (from the floor) in ascending order;
// none gives an empty list. The revisions are found without listing and read a
// bounded number at a time.
func (s *Store) ListReleases(ctx context.Context, project, workspace string) ([]*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	if dr, ok := s.d.(DirReader); ok {
		return s.listReleasesDir(ctx, dr, project, workspace)
	}
	return readKept(ctx, s, project, workspace, "list releases", s.readRelease)
}

// ListProjects returns, sorted, the projects with at least one release in
// workspace: of the project directories, those whose oldest kept revision
// exists in workspace (revisions are gapless from it, so that is whether any
// does).
func (s *Store) ListProjects(ctx context.Context, workspace string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateName("workspace", workspace); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	ents, err := s.d.List(ctx, releasesDir)
	if err != nil {
		return nil, fmt.Errorf("list projects of workspace %s: %w", workspace, err)
	}
	var candidates []string
	for _, e := range ents {
		if e.Dir && ValidateName("project", e.Name) == nil {
			candidates = append(candidates, e.Name)
		}
	}
	has := make([]bool, len(candidates))
	err = forEach(ctx, len(candidates), func(ctx context.Context, i int) error {
		ok, err := s.hasReleases(ctx, candidates[i], workspace)
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

// hasReleases says whether project/workspace has a release: whether its
// revision 1 exists, or else, when the release history limit removed it, the
// oldest kept revision.
func (s *Store) hasReleases(ctx context.Context, project, workspace string) (bool, error) {
	ok, err := s.releaseExists(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: 1})
	if err != nil || ok {
		return ok, err
	}
	floor, _, err := s.readFloor(ctx, project, workspace)
	if err != nil || floor == 1 {
		return false, err
	}
	return s.releaseExists(ctx, ReleaseKey{Project: project, Workspace: workspace, Revision: floor})
}
