package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// The release history limit (backend.GCPolicy.Releases) over this driver:
// a collection keeps each workspace's newest revisions from a floor, every
// reader starts from the floor, and what only the removed revisions named
// goes after the grace.

// historyRelease is revision rev of project/workspace, succeeded, with a
// state of its own (one chunk only it names) and a spec of its own.
func historyRelease(project, workspace string, rev int) *engine.Release {
	r := Release(project, workspace, rev)
	r.Phase = engine.PhaseSucceeded
	r.State = &engine.State{Resources: stateOf(3, int64(rev)*10)}
	return r
}

// revisionsBy returns the revisions of list, in their order.
func revisionsBy[T any](list []T, rev func(T) int) []int {
	out := make([]int, 0, len(list))
	for _, r := range list {
		out = append(out, rev(r))
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for r := from; r <= to; r++ {
		out = append(out, r)
	}
	return out
}

// requireHistory checks every reader of b over project/workspace: the kept
// revisions are from..to, each reads as want has it, those under from are
// not found, naming the floor.
func requireHistory(t *testing.T, what string, b backend.Backend, project, workspace string, from, to int, want map[int]*engine.Release) {
	t.Helper()
	rels, err := b.ListReleases(ctx, project, workspace)
	if err != nil {
		t.Fatalf("%s: ListReleases: %v", what, err)
	}
	if got := revisionsBy(rels, func(r *engine.Release) int { return r.Revision }); !slices.Equal(got, seq(from, to)) {
		t.Fatalf("%s: ListReleases gives revisions %v, want %v", what, got, seq(from, to))
	}
	for _, r := range rels {
		if w := want[r.Revision]; w != nil {
			requireSameRelease(t, fmt.Sprintf("%s: ListReleases, revision %d", what, r.Revision), r, w)
		}
	}
	sums, err := b.ListReleaseSummaries(ctx, project, workspace)
	if err != nil {
		t.Fatalf("%s: ListReleaseSummaries: %v", what, err)
	}
	if got := revisionsBy(sums, func(s backend.ReleaseSummary) int { return s.Release.Revision }); !slices.Equal(got, seq(from, to)) {
		t.Fatalf("%s: ListReleaseSummaries gives revisions %v, want %v", what, got, seq(from, to))
	}
	latest, err := b.LatestRelease(ctx, project, workspace)
	if err != nil || latest.Revision != to {
		t.Fatalf("%s: LatestRelease: %v, %v; want revision %d", what, latest, err, to)
	}
	if head, err := b.LatestReleaseHead(ctx, project, workspace); err != nil || head.Revision != to {
		t.Fatalf("%s: LatestReleaseHead: %+v, %v; want revision %d", what, head, err, to)
	}
	for rev := from; rev <= to; rev++ {
		got, err := b.GetRelease(ctx, project, workspace, rev)
		if err != nil {
			t.Fatalf("%s: GetRelease(%d): %v", what, rev, err)
		}
		if w := want[rev]; w != nil {
			requireSameRelease(t, fmt.Sprintf("%s: GetRelease(%d)", what, rev), got, w)
		}
	}
	for rev := 1; rev < from; rev++ {
		_, err := b.GetRelease(ctx, project, workspace, rev)
		if !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("%s: GetRelease(%d) under the floor: %v, want ErrNotFound", what, rev, err)
		}
		for _, part := range []string{fmt.Sprintf("revision %d of %s/%s", rev, project, workspace), fmt.Sprintf("oldest kept revision is %d", from)} {
			if !strings.Contains(err.Error(), part) {
				t.Fatalf("%s: GetRelease(%d) under the floor: %q, want it to say %q", what, rev, err, part)
			}
		}
	}
	projects, err := b.ListProjects(ctx, workspace)
	if err != nil || !slices.Contains(projects, project) {
		t.Fatalf("%s: ListProjects(%s): %q, %v; want %s among them", what, workspace, projects, err, project)
	}
}

// testReleaseHistory: with a history limit a collection removes the older
// revisions of each workspace (a dry run only lists them), every reader (over
// this driver, and over its directory reads where it has them) starts from
// the oldest kept revision, reading a removed one is ErrNotFound naming it
// and that floor, revisions are created on top as before and never under
// the floor, the specs and chunks only removed revisions named go after the
// grace while the kept revisions read the same, and revisions left under
// the floor by a collection that stopped half-way go with the next one.
func testReleaseHistory(t *testing.T, d *recorder, b backend.Backend) {
	s, ok := b.(*backend.Store)
	if !ok {
		t.Skip("not a backend.Store")
	}
	// The same records through the driver itself: a driver that reads
	// directories at once (backend.DirReader) lists through that.
	direct := backend.NewStore(d.Driver)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	policy := backend.DefaultGCPolicy()
	policy.Releases = 3
	collect := collector(t, ctx, s)
	chunks := chunkCounter(t, ctx, d, "shop", "dev")

	// Revisions 7 to 9 share a spec and a state (held as patches of that
	// spec): 8 and 9 name the spec and the chunk 7 wrote, so 9 must read the
	// same once 7 and 8 are gone.
	shared := stateOf(3, 70)
	want := map[int]*engine.Release{}
	for rev := 1; rev <= 10; rev++ {
		r := historyRelease("shop", "dev", rev)
		if rev >= 7 && rev <= 9 {
			r.Spec = &engine.Spec{Resources: shared}
			r.State = &engine.State{Resources: shared}
		}
		mustCreate(t, b, r)
		want[rev] = r
	}
	// Another workspace of few revisions, and one without a limit's effect.
	for rev := 1; rev <= 2; rev++ {
		mustCreate(t, b, historyRelease("shop", "prod", rev))
	}
	allChunks := chunks()
	if allChunks != 8 {
		t.Fatalf("10 revisions, 3 of them of one state, made %d chunks, want 8", allChunks)
	}

	dry := collect(t0, policy, true)
	if dry.Revisions != 7 || len(dry.Pruned) != 1 {
		t.Fatalf("dry run: %d revisions in %+v, want revisions 1 to 7 of shop/dev", dry.Revisions, dry.Pruned)
	}
	if p := dry.Pruned[0]; p.Project != "shop" || p.Workspace != "dev" || p.Floor != 8 || !slices.Equal(p.Revisions, seq(1, 7)) {
		t.Fatalf("dry run: %+v, want shop/dev revisions 1 to 7 removed, 8 the oldest kept", p)
	}
	if !slices.Contains(dry.Removed, "releases/shop/dev/1.yaml") || dry.Total() < 7 {
		t.Errorf("dry run: removes %v (total %d), want the release files named", dry.Removed, dry.Total())
	}
	requireHistory(t, "after a dry run", b, "shop", "dev", 1, 10, want)

	first := collect(t0, policy, false)
	if first.Revisions != 7 || len(first.Pruned) != 1 || !slices.Equal(first.Pruned[0].Revisions, seq(1, 7)) {
		t.Fatalf("collection with a limit of 3: %d revisions, %+v; want revisions 1 to 7 of shop/dev", first.Revisions, first.Pruned)
	}
	if first.Chunks != 0 || first.Specs != 0 {
		t.Errorf("collection with a limit of 3 removed %d chunks and %d specs at once, before their grace", first.Chunks, first.Specs)
	}
	for _, store := range []struct {
		name string
		b    backend.Backend
	}{{"after pruning", b}, {"after pruning, read directly", direct}} {
		requireHistory(t, store.name, store.b, "shop", "dev", 8, 10, want)
		requireHistory(t, store.name, store.b, "shop", "prod", 1, 2, nil)
	}
	if again := collect(t0.Add(time.Minute), policy, false); again.Revisions != 0 {
		t.Errorf("a second collection removed revisions %+v: only those past the limit go, once", again.Pruned)
	}

	// Creating goes on from the latest; nothing is created under the floor,
	// nor with a gap.
	r11 := historyRelease("shop", "dev", 11)
	mustCreate(t, b, r11)
	want[11] = r11
	if err := b.CreateRelease(ctx, historyRelease("shop", "dev", 5)); !errors.Is(err, backend.ErrRevisionExists) {
		t.Errorf("create revision 5, under the floor: %v, want ErrRevisionExists", err)
	}
	if err := b.CreateRelease(ctx, historyRelease("shop", "dev", 13)); err == nil || !strings.Contains(err.Error(), "gap") {
		t.Errorf("create revision 13 after 11: %v, want a gap refused", err)
	}
	requireHistory(t, "after creating on top", b, "shop", "dev", 8, 11, want)
	requireHistory(t, "after creating on top, read directly", direct, "shop", "dev", 8, 11, want)

	// A hint left under the floor does not mislead LatestRelease.
	if _, err := d.Write(ctx, "releases/shop/dev/.latest", []byte("2"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	if r, err := b.LatestRelease(ctx, "shop", "dev"); err != nil || r.Revision != 11 {
		t.Errorf("LatestRelease with a hint under the floor: %v, %v; want revision 11", r, err)
	}

	// What only the removed revisions named goes after the grace (revision
	// 8, removed by the collection below, later: its chunk and spec were
	// named while that collection looked).
	collect(t0.Add(2*time.Minute), policy, false)
	late := collect(t0.Add(policy.Grace+3*time.Minute), policy, false)
	// Revisions 1 and 2 of shop/prod have the specs of shop/dev's; 9 has
	// the spec and chunk of 7.
	if late.Chunks != 6 || late.Specs != 4 {
		t.Errorf("after the grace: removed %d chunks and %d specs, want the chunks of revisions 1 to 6 and the specs of 3 to 6", late.Chunks, late.Specs)
	}
	if got := chunks(); got != allChunks+1-late.Chunks {
		t.Errorf("after the grace: %d chunks left of %d (and revision 11's), %d removed", got, allChunks, late.Chunks)
	}
	collect(t0.Add(2*policy.Grace+3*time.Minute), policy, false) // empties the trash
	if _, err := b.GetSpec(ctx, engine.HashSpec(want[3].Spec)); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("the spec only removed revision 3 named, a grace after its removal: %v, want ErrNotFound", err)
	}
	requireHistory(t, "after the grace", b, "shop", "dev", 9, 11, want)
	requireHistory(t, "after the grace, read directly", direct, "shop", "dev", 9, 11, want)

	// A collection that stopped after raising the floor left revisions
	// under it: readers start from the floor, and the next collection
	// removes them, limit or none.
	if _, err := d.Write(ctx, "releases/shop/dev/.floor", []byte("10"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	requireHistory(t, "with revision 9 left under the floor", direct, "shop", "dev", 10, 11, nil)
	if rels, err := b.ListReleases(ctx, "shop", "dev"); err != nil || len(rels) != 2 || rels[0].Revision != 10 {
		t.Errorf("ListReleases with revision 9 left under the floor: %d, %v", len(rels), err)
	}
	noLimit := backend.DefaultGCPolicy()
	rest := collect(t0.Add(2*policy.Grace), noLimit, false)
	if rest.Revisions != 1 || len(rest.Pruned) != 1 || !slices.Equal(rest.Pruned[0].Revisions, []int{9}) {
		t.Errorf("a collection without a limit after one that stopped: %+v, want revision 9 removed", rest.Pruned)
	}
	requireHistory(t, "after the leftover went", b, "shop", "dev", 10, 11, want)

	// The newest succeeded revision stays, whatever the limit: a rollback
	// restores it.
	for rev := 12; rev <= 15; rev++ {
		r := historyRelease("shop", "dev", rev)
		r.Phase = engine.PhaseFailed
		mustCreate(t, b, r)
	}
	if rep := collect(t0.Add(3*policy.Grace), policy, false); rep.Revisions != 1 || rep.Pruned[0].Floor != 11 {
		t.Errorf("with 4 failed revisions after 11: removed %+v, want revision 10 only, 11 (the newest succeeded) kept", rep.Pruned)
	}
	two := policy
	two.Releases = 2
	if rep := collect(t0.Add(4*policy.Grace), two, false); rep.Revisions != 0 {
		t.Errorf("limit 2 with 4 failed revisions after 11: removed %+v, want 11, the newest succeeded, kept", rep.Pruned)
	}
	requireHistory(t, "after failures", b, "shop", "dev", 11, 15, want)
}

// testReleaseHistoryRaces: a collection with a history limit running while
// revisions are created never loses one nor breaks the numbering, readers
// listing meanwhile always get a gapless run of revisions, and two
// collections at once leave a readable history.
func testReleaseHistoryRaces(t *testing.T, d *recorder, b backend.Backend) {
	s, ok := b.(*backend.Store)
	if !ok {
		t.Skip("not a backend.Store")
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	policy := backend.DefaultGCPolicy()
	policy.Releases = 2
	const last = 16
	mustCreate(t, b, historyRelease("shop", "dev", 1))
	var wg sync.WaitGroup
	var createErr error
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for rev := 2; rev <= last; rev++ {
			// As a run does: the next revision after the latest.
			latest, err := b.LatestRelease(ctx, "shop", "dev")
			if err != nil {
				createErr = fmt.Errorf("latest before revision %d: %w", rev, err)
				return
			}
			if latest.Revision != rev-1 {
				createErr = fmt.Errorf("latest before revision %d is %d", rev, latest.Revision)
				return
			}
			if err := b.CreateRelease(ctx, historyRelease("shop", "dev", rev)); err != nil {
				createErr = err
				return
			}
		}
	}()
	var listErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			rels, err := b.ListReleases(ctx, "shop", "dev")
			if err != nil {
				listErr = fmt.Errorf("ListReleases while collecting: %w", err)
				return
			}
			revs := revisionsBy(rels, func(r *engine.Release) int { return r.Revision })
			if len(revs) == 0 || !slices.Equal(revs, seq(revs[0], revs[len(revs)-1])) {
				listErr = fmt.Errorf("ListReleases while collecting gave revisions %v", revs)
				return
			}
			sums, err := b.ListReleaseSummaries(ctx, "shop", "dev")
			if err != nil {
				listErr = fmt.Errorf("ListReleaseSummaries while collecting: %w", err)
				return
			}
			if len(sums) == 0 {
				listErr = errors.New("ListReleaseSummaries while collecting gave none")
				return
			}
		}
	}()
	var collectErrs []error
	for i := 0; ; i++ {
		if _, err := backend.Collect(ctx, s, policy, t0.Add(time.Duration(i)*time.Minute), false); err != nil {
			collectErrs = append(collectErrs, err)
		}
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	wg.Wait()
	if createErr != nil {
		t.Fatalf("creating while collections ran: %v", createErr)
	}
	if listErr != nil {
		t.Fatal(listErr)
	}
	if err := errors.Join(collectErrs...); err != nil {
		t.Fatalf("collections while revisions were created: %v", err)
	}
	if _, err := backend.Collect(ctx, s, policy, t0.Add(time.Hour), false); err != nil {
		t.Fatal(err)
	}
	requireHistory(t, "after creating while collecting", b, "shop", "dev", last-1, last, nil)

	// Two collections at once, of different limits: one may refuse to run
	// beside the other; either way the history reads from one floor.
	for rev := last + 1; rev <= last+8; rev++ {
		mustCreate(t, b, historyRelease("shop", "dev", rev))
	}
	errs := make([]error, 2)
	for i, keep := range []int{3, 5} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := policy
			p.Releases = keep
			_, errs[i] = backend.Collect(ctx, s, p, t0.Add(2*time.Hour), false)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "another one is running") {
			t.Errorf("two collections at once: %v", err)
		}
	}
	rels, err := b.ListReleases(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	first := rels[0].Revision
	if first != last+6 && first != last+4 {
		t.Errorf("after two collections at once the oldest kept revision is %d, want %d or %d", first, last+6, last+4)
	}
	requireHistory(t, "after two collections at once", b, "shop", "dev", first, last+8, nil)
}
