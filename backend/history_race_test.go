package backend_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
)

// readHookDriver calls hook before every read and existence check.
type readHookDriver struct {
	backend.Driver
	hook func(key string)
}

func (r *readHookDriver) Read(ctx context.Context, key string) ([]byte, string, error) {
	r.hook(key)
	return r.Driver.Read(ctx, key)
}

func (r *readHookDriver) Exists(ctx context.Context, key string) (bool, error) {
	r.hook(key)
	return r.Driver.Exists(ctx, key)
}

// racedHistory is a history of p/w whose reader (s) loses to a collection
// each time it looks at the revision on says: before that look, a new
// revision is created and a collection keeping 2 removes the oldest
// (at most 30 times). staleHint leaves the latest hint at revision 1 each
// time, so that the latest is looked for. races says how many ran.
func racedHistory(t *testing.T, on func(floor, latest, rev int) bool, staleHint bool) (s *backend.Store, races func() int) {
	t.Helper()
	ctx := context.Background()
	d, err := local.NewDriver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inner := backend.NewStore(d)
	create := func(rev int) error {
		r := releaseWith(rev, nil, resources(1, int64(rev)))
		r.Phase = engine.PhaseSucceeded
		return inner.CreateRelease(ctx, r)
	}
	for rev := 1; rev <= 2; rev++ {
		if err := create(rev); err != nil {
			t.Fatal(err)
		}
	}
	policy := backend.DefaultGCPolicy()
	policy.Releases = 2
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	floor, latest, n := 1, 2, 0
	h := &readHookDriver{Driver: d}
	h.hook = func(key string) {
		mu.Lock()
		defer mu.Unlock()
		rev, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(key, "releases/p/w/"), ".yaml"))
		if err != nil || !on(floor, latest, rev) || n == 30 {
			return
		}
		n++
		latest++
		if err := create(latest); err != nil {
			t.Error(err)
			return
		}
		if _, err := backend.Collect(ctx, inner, policy, t0, false); err != nil {
			t.Error(err)
		}
		floor = latest - 1
		if staleHint {
			if _, err := d.Write(ctx, "releases/p/w/.latest", []byte("1"), backend.Condition{}); err != nil {
				t.Error(err)
			}
		}
	}
	return backend.NewStore(h), func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestReadersFinishBesideCollections: a reader that loses a revision to a
// collection on every look (a listing at the oldest kept revision, a search
// for the latest past it) still finishes with a gapless run of revisions:
// what it read or found from the new floor on is kept, not looked at again.
func TestReadersFinishBesideCollections(t *testing.T) {
	ctx := context.Background()
	atFloor := func(floor, _, rev int) bool { return rev == floor }
	pastLatest := func(_, latest, rev int) bool { return rev == latest+1 }
	for _, c := range []struct {
		name      string
		on        func(floor, latest, rev int) bool
		staleHint bool
		revs      func(s *backend.Store) ([]int, error)
	}{
		{"ListReleases", atFloor, false, func(s *backend.Store) ([]int, error) {
			rels, err := s.ListReleases(ctx, "p", "w")
			var revs []int
			for _, r := range rels {
				revs = append(revs, r.Revision)
			}
			return revs, err
		}},
		{"ListReleaseSummaries", atFloor, false, func(s *backend.Store) ([]int, error) {
			sums, err := s.ListReleaseSummaries(ctx, "p", "w")
			var revs []int
			for _, r := range sums {
				revs = append(revs, r.Release.Revision)
			}
			return revs, err
		}},
		{"LatestRelease", pastLatest, true, func(s *backend.Store) ([]int, error) {
			r, err := s.LatestRelease(ctx, "p", "w")
			if err != nil {
				return nil, err
			}
			return []int{r.Revision}, nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, races := racedHistory(t, c.on, c.staleHint)
			revs, err := c.revs(s)
			if err != nil {
				t.Fatalf("beside collections: %v", err)
			}
			if len(revs) == 0 {
				t.Fatal("beside collections: none")
			}
			for i := 1; i < len(revs); i++ {
				if revs[i] != revs[i-1]+1 {
					t.Fatalf("beside collections: %v, not gapless", revs)
				}
			}
			if races() == 0 {
				t.Fatal("no collection ran beside it")
			}
			t.Logf("%v after %d collections beside it", revs, races())
		})
	}
}
