package backend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// How Collect stays safe while runs write (gc.go says what it removes):
//
// A run writes a release's spec and state chunks before the release file that
// names them (store_releases.go). A new object is therefore unreferenced for
// the moment between the two, which Grace covers: Collect removes only what
// two passes at least Grace apart found unreferenced.
//
// An old unreferenced object can also be named again: a spec or chunk is named
// by its content, and a writer that finds it there does not write it again. If
// Collect removes it in between, the release would name a missing object. Both
// sides close that window:
//   - Collect reads every object it removes first, and after removing looks at
//     the releases again: whatever a release now names, it writes back;
//   - a writer that found its spec or a chunk already there looks again once
//     its release file is written (keepReused), and writes it back if it is
//     gone.
// A release written before Collect's second look is seen by it; one written
// after is checked by its writer after Collect's removal. Either way the
// object is there once both have finished. Until then, and should the writer
// stop before it looks again, readers find the object in Collect's trash
// (store_trash.go), and the collection that empties the trash writes back
// what a release names first.

// gcMarksKey holds Collect's marks (gcMarks), compressed JSON.
const (
	gcRoot     = "gc"
	gcMarksKey = gcRoot + "/marks.json"
)

// reused is what a release write found already stored instead of writing.
type reused struct {
	// spec, when set, was stored already under specHash.
	spec     *engine.Spec
	specHash string
	mu       sync.Mutex
	chunks   map[string][]byte
}

func (r *reused) addChunk(key string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.chunks == nil {
		r.chunks = map[string][]byte{}
	}
	r.chunks[key] = data
}

// keepReused writes back what found names if a garbage collection removed
// it while the release was being written.
func (s *Store) keepReused(ctx context.Context, key ReleaseKey, found *reused) error {
	if found == nil {
		return nil
	}
	if found.spec != nil {
		// The hash is the one the write just computed: hashing a large spec
		// again only to look for it costs as much as the write itself.
		ok, err := s.d.Exists(ctx, specKey(found.specHash))
		if err != nil {
			return fmt.Errorf("spec %s: %w", found.specHash, err)
		}
		if !ok {
			if _, err := s.PutSpec(ctx, found.spec); err != nil {
				return err
			}
		}
	}
	for k, data := range found.chunks {
		ok, err := s.d.Exists(ctx, k)
		if err != nil {
			return fmt.Errorf("state chunk %s: %w", s.d.Where(k), err)
		}
		if ok {
			continue
		}
		if _, err := s.write(ctx, k, data, Condition{CreateOnly: true}); err != nil && !errors.Is(err, ErrExists) {
			return fmt.Errorf("state chunk %s: %w", s.d.Where(k), err)
		}
	}
	return nil
}

// GCReport says what a Collect removed, or with DryRun would remove.
type GCReport struct {
	DryRun bool `json:"dryRun"`
	// Counts of what was removed, by kind.
	Specs        int `json:"specs"`
	Chunks       int `json:"chunks"`
	StateDirs    int `json:"stateDirs"`
	RunLogs      int `json:"runLogs"`
	DriftReports int `json:"driftReports"`
	Requests     int `json:"requests"`
	AuditDays    int `json:"auditDays"`
	// Revisions is how many release revisions were removed: older than the
	// release history limit keeps (GCPolicy.Releases), or left under the
	// floor by a collection that stopped half-way. Pruned names them by
	// workspace.
	Revisions int              `json:"revisions"`
	Pruned    []PrunedReleases `json:"pruned,omitempty"`
	// Bytes is the size of the specs and chunks removed.
	Bytes int64 `json:"bytes"`
	// Removed names every key (or, for a run log, state directory or audit
	// day, directory; for a removed revision, its release file) removed,
	// sorted.
	Removed []string `json:"removed"`
	// Restored names what was removed and then written back because a
	// release written meanwhile named it.
	Restored []string `json:"restored,omitempty"`
	// Waiting is how many candidates are not yet due (seen unreferenced for
	// less than the grace, run logs younger than their retention).
	Waiting int `json:"waiting"`
	// Releases is how many release files were read to find references.
	Releases int `json:"releases"`
}

// Total is how many records the report counts as removed.
func (r GCReport) Total() int {
	return r.Specs + r.Chunks + r.StateDirs + r.RunLogs + r.DriftReports + r.Requests + r.AuditDays + r.Revisions
}

// PrunedReleases are the revisions of one project/workspace a collection
// removed (or with DryRun would remove), ascending, and the oldest revision
// it keeps.
type PrunedReleases struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Revisions []int  `json:"revisions"`
	Floor     int    `json:"floor"`
}

// Ranges names the revisions as runs of consecutive ones: "1-7" or "1-3, 5".
func (p PrunedReleases) Ranges() string {
	var b strings.Builder
	revs := slices.Sorted(slices.Values(p.Revisions))
	for i := 0; i < len(revs); {
		j := i
		for j+1 < len(revs) && revs[j+1] == revs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(revs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(revs[j]))
		}
		i = j + 1
	}
	return b.String()
}

// gcRefs is what the releases of a backend name.
type gcRefs struct {
	specs map[string]bool // spec hash
	// chunks by key; leftover: the state directories of final releases.
	chunks   map[string]bool
	leftover map[string]bool
	// workspaces are the release directories found ("releases/p/w"), and
	// histories their revisions, as the release history limit decides.
	workspaces []string
	histories  []gcHistory
	releases   int
}

// names says whether a release named key, a spec or a state chunk.
func (r *gcRefs) names(key string) bool {
	if rest, ok := strings.CutPrefix(key, specsDir+"/"); ok {
		hash, ok := strings.CutSuffix(rest, yamlExt)
		return ok && r.specs[hash]
	}
	return r.chunks[key]
}

// gcHistory is the release history of one project/workspace as a scan found
// it: its floor, and every release file (under the floor too), ascending.
type gcHistory struct {
	project, workspace string
	floor              int
	heads              []revisionHead
	stateDirs          map[int]bool
}

// scanRefs reads every release file. A release file that cannot be read or
// decoded fails it: what it names would be unknown.
func (s *Store) scanRefs(ctx context.Context) (*gcRefs, error) {
	refs := &gcRefs{specs: map[string]bool{}, chunks: map[string]bool{}, leftover: map[string]bool{}}
	projects, err := dirsUnder(ctx, s, releasesDir)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		workspaces, err := dirsUnder(ctx, s, releasesDir+"/"+p)
		if err != nil {
			return nil, err
		}
		for _, w := range workspaces {
			if err := s.scanWorkspace(ctx, p, w, refs); err != nil {
				return nil, err
			}
		}
	}
	return refs, nil
}

// scanWorkspace adds what the release files of p/w name to refs.
func (s *Store) scanWorkspace(ctx context.Context, p, w string, refs *gcRefs) error {
	dir := workspaceDir(p, w)
	refs.workspaces = append(refs.workspaces, dir)
	ents, err := s.d.List(ctx, dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.d.Where(dir), err)
	}
	var revs []int
	stateDirs := map[int]bool{}
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name, yamlExt); ok && !e.Dir {
			if rev, err := strconv.Atoi(n); err == nil && rev > 0 && strconv.Itoa(rev) == n {
				revs = append(revs, rev)
			}
		}
		if n, ok := strings.CutSuffix(e.Name, stateExt); ok && e.Dir {
			if rev, err := strconv.Atoi(n); err == nil && rev > 0 && strconv.Itoa(rev) == n {
				stateDirs[rev] = true
			}
		}
	}
	floor, _, err := s.readFloor(ctx, p, w)
	if err != nil {
		return fmt.Errorf("%w: no release is removed while which are kept is unknown", err)
	}
	slices.Sort(revs)
	type named struct {
		spec, specRef string
		chunks        []string
		phase         engine.Phase
		op            engine.Operation
		found         bool
	}
	out := make([]named, len(revs))
	err = forEach(ctx, len(revs), func(ctx context.Context, i int) error {
		key := ReleaseKey{Project: p, Workspace: w, Revision: revs[i]}
		objKey := releaseKey(key)
		data, _, err := s.d.Read(ctx, objKey)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", s.d.Where(objKey), err)
		}
		spec, specRef, chunks, phase, op, err := releaseNames(data)
		if err != nil {
			return fmt.Errorf("release %s: %s: %w: no record is removed while what it names is unknown", key, s.d.Where(objKey), err)
		}
		out[i] = named{spec: spec, specRef: specRef, chunks: chunks, phase: phase, op: op, found: true}
		return nil
	})
	if err != nil {
		return err
	}
	h := gcHistory{project: p, workspace: w, floor: floor, stateDirs: stateDirs}
	for i, n := range out {
		if !n.found {
			continue // removed between the listing and the read
		}
		h.heads = append(h.heads, revisionHead{Revision: revs[i], Phase: n.phase, Operation: n.op})
		refs.releases++
		for _, hash := range []string{n.spec, n.specRef} {
			if hash != "" {
				refs.specs[hash] = true
			}
		}
		for _, c := range n.chunks {
			refs.chunks[chunkKey(p, w, c)] = true
		}
		if n.phase.Final() && stateDirs[revs[i]] {
			refs.leftover[stateDir(ReleaseKey{Project: p, Workspace: w, Revision: revs[i]})] = true
		}
	}
	refs.histories = append(refs.histories, h)
	return nil
}

// releaseNames decodes what a release file (either format) names, without
// opening sealed values or reading its chunks.
func releaseNames(data []byte) (spec, specRef string, chunks []string, phase engine.Phase, op engine.Operation, err error) {
	var rec struct {
		SpecHash  string           `json:"specHash"`
		Phase     engine.Phase     `json:"phase"`
		Operation engine.Operation `json:"operation"`
		Parts     *recordParts     `json:"kumoRecord"`
	}
	if isCompressed(data) {
		text, err := decompress(data)
		if err != nil {
			return "", "", nil, "", "", err
		}
		if err := decodeJSON(text, &rec); err != nil {
			return "", "", nil, "", "", fmt.Errorf("decode: %w", err)
		}
		if rec.Parts == nil || !knownRecordFormat(rec.Parts.Format) {
			return "", "", nil, "", "", fmt.Errorf("not a release record of format %d or %d", recordFormatWhole, recordFormat)
		}
	} else if err := decodeYAML(data, &rec); err != nil {
		return "", "", nil, "", "", fmt.Errorf("decode: %w", err)
	}
	if rec.Parts != nil {
		specRef = rec.Parts.SpecRef
		for _, c := range rec.Parts.chunks() {
			if !validHash(c.Key) {
				return "", "", nil, "", "", fmt.Errorf("state chunk %q: not a hex sha256", c.Key)
			}
			chunks = append(chunks, c.Key)
		}
	}
	return rec.SpecHash, specRef, chunks, rec.Phase, rec.Operation, nil
}

// readMarks returns Collect's marks and their version ("" when none).
func (s *Store) readMarks(ctx context.Context) (gcMarks, string, error) {
	data, version, err := s.d.Read(ctx, gcMarksKey)
	if errors.Is(err, ErrNotFound) {
		return gcMarks{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", s.d.Where(gcMarksKey), err)
	}
	text, err := decompress(data)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", s.d.Where(gcMarksKey), err)
	}
	marks := gcMarks{}
	if err := decodeJSON(text, &marks); err != nil {
		return nil, "", fmt.Errorf("decode %s: %w", s.d.Where(gcMarksKey), err)
	}
	return marks, version, nil
}

// writeMarks stores marks over the copy of version ("": create), so that of
// two collections running at once one stops.
func (s *Store) writeMarks(ctx context.Context, marks gcMarks, version string) (string, error) {
	data, err := encodeCompressed(marks)
	if err != nil {
		return "", err
	}
	cond := Condition{IfVersion: version, CreateOnly: version == ""}
	v, err := s.write(ctx, gcMarksKey, data, cond)
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("%s changed while this collection ran: another one is running; try again when it ended: %w", s.d.Where(gcMarksKey), err)
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", s.d.Where(gcMarksKey), err)
	}
	return v, nil
}

// gcPass is one Collect's working state.
type gcPass struct {
	s      *Store
	p      GCPolicy
	now    time.Time
	marks  gcMarks
	seen   map[string]bool // the candidates found this pass (kept in marks)
	report GCReport
	// due, by kind; objects are read (held) before removal so that they can be
	// written back.
	dueObjects []string // specs and chunks
	dueDirs    []gcDir
	dueKeys    []gcKey
	duePrunes  []gcPrune
	// dueTrash are the trash's copies kept for Grace (store_trash.go), and
	// refs what the releases named when this pass read them.
	dueTrash []string
	refs     *gcRefs
}

// gcPrune is the revisions of one workspace to remove, under floor.
type gcPrune struct {
	project, workspace string
	floor              int
	revisions          []int
	stateDirs          map[int]bool
}

type gcDir struct {
	key  string
	kind *int
}

type gcKey struct {
	key  string
	kind *int
}

// candidate records key as a candidate (with signature sig) and says whether
// it has been one for keep.
func (g *gcPass) candidate(key, sig string, keep time.Duration) bool {
	g.seen[key] = true
	if due(g.marks.observe(key, sig, g.now), g.now, keep) {
		return true
	}
	g.report.Waiting++
	return false
}

// Collect removes, from the backend s keeps its records in, what policy p says
// has expired or is unreferenced (gc.go), as of now; with dryRun it removes
// nothing and writes nothing, and reports what it would remove. Releases are
// removed only past p's history limit (history.go); never the specs kept
// revisions name or keepSpecs names (the specs of runs waiting in a queue,
// which no release names yet). Two collections running at once: one fails,
// naming the other (and should both remove revisions, the floor they raise
// keeps the higher of their two decisions).
func Collect(ctx context.Context, s *Store, p GCPolicy, now time.Time, dryRun bool, keepSpecs ...string) (GCReport, error) {
	if err := p.Validate(); err != nil {
		return GCReport{}, fmt.Errorf("gc policy: %w", err)
	}
	for _, h := range keepSpecs {
		if !validHash(h) {
			return GCReport{}, fmt.Errorf("gc: spec %q to keep: not a spec hash", h)
		}
	}
	marks, version, err := s.readMarks(ctx)
	if err != nil {
		return GCReport{}, err
	}
	g := &gcPass{s: s, p: p, now: now, marks: marks, seen: map[string]bool{}, report: GCReport{DryRun: dryRun}}
	refs, err := s.scanRefs(ctx)
	if err != nil {
		return GCReport{}, err
	}
	g.report.Releases = refs.releases
	for _, h := range keepSpecs {
		refs.specs[h] = true
	}
	g.refs = refs
	g.findPruned(refs)
	if err := g.findUnreferenced(ctx, refs); err != nil {
		return GCReport{}, err
	}
	if err := g.findExpired(ctx); err != nil {
		return GCReport{}, err
	}
	if err := g.findTrash(ctx); err != nil {
		return GCReport{}, err
	}
	if dryRun {
		g.listDue()
		return g.report, nil
	}
	// Claim the pass: the marks written here, conditionally, stop a second
	// collection running at once before it removes anything.
	g.marks.keepOnly(g.seen)
	for _, k := range g.dueObjects {
		// Its copy in the trash, made below, is kept for Grace from now.
		g.marks[trashKey(k)] = gcMark{Seen: now.Unix()}
	}
	if version, err = s.writeMarks(ctx, g.marks, version); err != nil {
		return GCReport{}, err
	}
	if err := g.remove(ctx); err != nil {
		return g.report, err
	}
	for _, k := range g.report.Removed {
		delete(g.marks, k)
	}
	if _, err := s.writeMarks(ctx, g.marks, version); err != nil {
		return g.report, err
	}
	return g.report, nil
}

// findPruned finds, per workspace, the revisions under the floor the release
// history limit sets (history.go), and those a collection that stopped
// half-way left under the floor (with or without a limit). Their leftover
// state directories go with them, not as leftovers.
func (g *gcPass) findPruned(refs *gcRefs) {
	for _, h := range refs.histories {
		var kept []revisionHead
		present := make([]int, 0, len(h.heads))
		for _, r := range h.heads {
			present = append(present, r.Revision)
			if r.Revision >= h.floor {
				kept = append(kept, r)
			}
		}
		floor := historyFloor(kept, h.floor, g.p.Releases)
		revs := belowFloor(present, floor)
		if len(revs) == 0 {
			continue
		}
		for _, rev := range revs {
			delete(refs.leftover, stateDir(ReleaseKey{Project: h.project, Workspace: h.workspace, Revision: rev}))
		}
		g.duePrunes = append(g.duePrunes, gcPrune{project: h.project, workspace: h.workspace, floor: floor, revisions: revs, stateDirs: h.stateDirs})
	}
}

// findUnreferenced finds the specs, chunks and leftover state directories no
// release names.
func (g *gcPass) findUnreferenced(ctx context.Context, refs *gcRefs) error {
	s := g.s
	ents, err := s.d.List(ctx, specsDir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.d.Where(specsDir), err)
	}
	for _, e := range ents {
		hash, ok := strings.CutSuffix(e.Name, yamlExt)
		if e.Dir || !ok || !validHash(hash) || refs.specs[hash] {
			continue
		}
		if g.candidate(specKey(hash), "", g.p.Grace) {
			g.dueObjects = append(g.dueObjects, specKey(hash))
		}
	}
	for _, dir := range refs.workspaces {
		cdir := dir + "/" + chunksDir
		ents, err := s.d.List(ctx, cdir)
		if err != nil {
			return fmt.Errorf("list %s: %w", s.d.Where(cdir), err)
		}
		for _, e := range ents {
			key := cdir + "/" + e.Name
			if e.Dir || !validHash(e.Name) || refs.chunks[key] {
				continue
			}
			if g.candidate(key, "", g.p.Grace) {
				g.dueObjects = append(g.dueObjects, key)
			}
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(refs.leftover)) {
		if g.candidate(dir, "", g.p.Grace) {
			g.dueDirs = append(g.dueDirs, gcDir{dir, &g.report.StateDirs})
		}
	}
	return nil
}

// findExpired finds the run logs, drift reports, idempotency records and
// audit days past their retention.
func (g *gcPass) findExpired(ctx context.Context) error {
	s := g.s
	runs, err := s.d.List(ctx, runsDir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.d.Where(runsDir), err)
	}
	for _, e := range runs {
		if !e.Dir || ValidateName("run", e.Name) != nil {
			continue
		}
		dir := runDir(e.Name)
		parts, err := s.d.List(ctx, dir)
		if err != nil {
			return fmt.Errorf("list %s: %w", s.d.Where(dir), err)
		}
		names := make([]string, 0, len(parts))
		for _, p := range parts {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		// A log that gained a part is seen anew: its run is still going.
		if g.candidate(dir, strings.Join(names, ","), g.p.RunLogs) {
			g.dueDirs = append(g.dueDirs, gcDir{dir, &g.report.RunLogs})
		}
	}
	if err := g.findDrift(ctx); err != nil {
		return err
	}
	if err := g.findRequests(ctx); err != nil {
		return err
	}
	if g.p.Audit > 0 {
		days, err := s.d.List(ctx, auditRoot)
		if err != nil {
			return fmt.Errorf("list %s: %w", s.d.Where(auditRoot), err)
		}
		for _, d := range days {
			if d.Dir && auditDayExpired(d.Name, g.now, g.p.Audit) {
				g.dueDirs = append(g.dueDirs, gcDir{auditRoot + "/" + d.Name, &g.report.AuditDays})
			}
		}
	}
	return nil
}

func (g *gcPass) findDrift(ctx context.Context) error {
	projects, err := dirsUnder(ctx, g.s, driftRoot)
	if err != nil {
		return err
	}
	for _, p := range projects {
		workspaces, err := dirsUnder(ctx, g.s, driftRoot+"/"+p)
		if err != nil {
			return err
		}
		for _, w := range workspaces {
			names, err := g.s.driftNames(ctx, p, w)
			if err != nil {
				return err
			}
			stamps := make([]int64, len(names))
			for i, n := range names {
				stamp, _, _ := strings.Cut(n, "_")
				v, _ := strconv.ParseUint(stamp, 10, 63)
				stamps[i] = int64(v)
			}
			for _, n := range driftExpired(names, stamps, g.now, g.p.DriftReports) {
				g.dueKeys = append(g.dueKeys, gcKey{driftDir(p, w) + "/" + n, &g.report.DriftReports})
			}
		}
	}
	return nil
}

func (g *gcPass) findRequests(ctx context.Context) error {
	s := g.s
	ents, err := s.d.List(ctx, requestsDir)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.d.Where(requestsDir), err)
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name, jsonExt)
		if e.Dir || !ok || ValidateName("request", name) != nil {
			continue
		}
		key := requestKey(name)
		data, _, err := s.d.Read(ctx, key)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", s.d.Where(key), err)
		}
		var r RequestRecord
		// One that does not decode has no time: it goes a window after
		// it was first seen.
		_ = decodeJSON(data, &r)
		var seen time.Time
		if r.Created.IsZero() {
			g.seen[key] = true
			seen = g.marks.observe(key, "", g.now)
		}
		if requestExpired(r.Created, seen, g.now, g.p.Requests) {
			g.dueKeys = append(g.dueKeys, gcKey{key, &g.report.Requests})
		} else if r.Created.IsZero() {
			g.report.Waiting++
		}
	}
	return nil
}

// countPruned adds the revisions of pr (removed, or due in a dry run) to the
// report.
func (g *gcPass) countPruned(pr gcPrune, revs []int) {
	if len(revs) == 0 {
		return
	}
	g.report.Revisions += len(revs)
	g.report.Pruned = append(g.report.Pruned, PrunedReleases{Project: pr.project, Workspace: pr.workspace, Revisions: revs, Floor: pr.floor})
	for _, rev := range revs {
		g.report.Removed = append(g.report.Removed, releaseKey(ReleaseKey{Project: pr.project, Workspace: pr.workspace, Revision: rev}))
	}
}

// prune removes the revisions due, each workspace's floor raised first so
// that no reader meets them half-removed; a revision's leftover state
// directory goes before its release file, so that a collection stopping
// between the two leaves the release file under the floor, which the next
// one removes.
func (g *gcPass) prune(ctx context.Context) error {
	s := g.s
	for _, pr := range g.duePrunes {
		if err := s.raiseFloor(ctx, pr.project, pr.workspace, pr.floor); err != nil {
			return err
		}
		var done []int
		for _, rev := range pr.revisions {
			key := ReleaseKey{Project: pr.project, Workspace: pr.workspace, Revision: rev}
			if pr.stateDirs[rev] {
				if err := s.d.DeleteAll(ctx, stateDir(key)); err != nil {
					g.countPruned(pr, done)
					return fmt.Errorf("remove %s: %w", s.d.Where(stateDir(key)), err)
				}
			}
			if err := s.d.Delete(ctx, releaseKey(key)); err != nil && !errors.Is(err, ErrNotFound) {
				g.countPruned(pr, done)
				return fmt.Errorf("remove release %s (under the oldest kept revision %d): %s: %w", key, pr.floor, s.d.Where(releaseKey(key)), err)
			}
			s.seen.forget(key)
			done = append(done, rev)
		}
		g.countPruned(pr, done)
	}
	return nil
}

// listDue fills a dry run's report with what is due.
func (g *gcPass) listDue() {
	for _, pr := range g.duePrunes {
		g.countPruned(pr, pr.revisions)
	}
	for _, k := range g.dueObjects {
		g.countObject(k, 0)
	}
	for _, d := range g.dueDirs {
		*d.kind++
		g.report.Removed = append(g.report.Removed, d.key)
	}
	for _, k := range g.dueKeys {
		*k.kind++
		g.report.Removed = append(g.report.Removed, k.key)
	}
	slices.Sort(g.report.Removed)
}

func (g *gcPass) countObject(key string, size int) {
	if strings.HasPrefix(key, specsDir+"/") {
		g.report.Specs++
	} else {
		g.report.Chunks++
	}
	g.report.Bytes += int64(size)
	g.report.Removed = append(g.report.Removed, key)
}

// remove removes what is due: the trash's copies kept for Grace, then the
// specs and chunks (each kept in the trash first), writing back any a release
// written meanwhile names.
func (g *gcPass) remove(ctx context.Context) error {
	s := g.s
	if err := g.prune(ctx); err != nil {
		slices.Sort(g.report.Removed)
		return err
	}
	if err := g.emptyTrash(ctx, g.refs); err != nil {
		return err
	}
	held := map[string][]byte{}
	for _, k := range g.dueObjects {
		data, _, err := s.d.Read(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", s.d.Where(k), err)
		}
		if err := g.throwAway(ctx, k, data); err != nil {
			return err
		}
		held[k] = data
		g.countObject(k, len(data))
	}
	if len(held) > 0 {
		refs, err := s.scanRefs(ctx)
		if err != nil {
			return g.restoreAll(ctx, held, err)
		}
		for k, data := range held {
			if refs.names(k) {
				if err := g.restore(ctx, k, data); err != nil {
					return err
				}
			}
		}
	}
	for _, d := range g.dueDirs {
		if err := s.d.DeleteAll(ctx, d.key); err != nil {
			return fmt.Errorf("remove %s: %w", s.d.Where(d.key), err)
		}
		*d.kind++
		g.report.Removed = append(g.report.Removed, d.key)
	}
	for _, k := range g.dueKeys {
		if err := s.d.Delete(ctx, k.key); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("remove %s: %w", s.d.Where(k.key), err)
		}
		*k.kind++
		g.report.Removed = append(g.report.Removed, k.key)
	}
	slices.Sort(g.report.Removed)
	slices.Sort(g.report.Restored)
	return nil
}

// restore writes back one removed object.
func (g *gcPass) restore(ctx context.Context, key string, data []byte) error {
	if _, err := g.s.write(ctx, key, data, Condition{CreateOnly: true}); err != nil && !errors.Is(err, ErrExists) {
		return fmt.Errorf("write back %s, which a new release names: %w", g.s.d.Where(key), err)
	}
	g.report.Restored = append(g.report.Restored, key)
	if i := slices.Index(g.report.Removed, key); i >= 0 {
		g.report.Removed = slices.Delete(g.report.Removed, i, i+1)
		if strings.HasPrefix(key, specsDir+"/") {
			g.report.Specs--
		} else {
			g.report.Chunks--
		}
		g.report.Bytes -= int64(len(data))
	}
	return nil
}

// restoreAll writes back everything removed when the releases could not be
// read again to tell what must come back (fail closed).
func (g *gcPass) restoreAll(ctx context.Context, held map[string][]byte, cause error) error {
	errs := []error{cause}
	for _, k := range slices.Sorted(maps.Keys(held)) {
		if err := g.restore(ctx, k, held[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return fmt.Errorf("read the releases again after removing unreferenced objects (all written back): %w", errors.Join(errs...))
}
