package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// requestsDir holds the idempotent requests' records (requestKey).
const requestsDir = "requests"

// RecordRoots are the top-level directories of the layout (layout.go): every
// key a Store writes is under one of them (TestRecordRootsCoverTheLayout), and
// nothing else in a driver's root (a local home's Temporal database, keys) is
// kumo's record.
var RecordRoots = []string{releasesDir, specsDir, workspacesDir, runsDir, driftRoot, auditRoot, requestsDir, gcRoot}

// CopyOptions narrow a Copy.
type CopyOptions struct {
	// Project, when set, copies that project's releases (every workspace), its
	// drift reports, the specs and run logs its releases name, and the
	// workspaces; not the audit log or other projects.
	Project string
}

// CopyReport says what a Copy did.
type CopyReport struct {
	// Records is how many records the source holds that were copied (or were
	// already at the destination, byte for byte: Present of them).
	Records, Present int
	// Bytes is the size of those records.
	Bytes int64
	// Digest is the SHA-256 over every copied record's key and SHA-256, in key
	// order: the same at both ends once verified.
	Digest string
}

// Copy copies every record of from to to, byte for byte (records stay
// encoded, compressed and sealed as the source wrote them), then reads each
// back from to and compares its hash. It refuses, before writing anything,
// while a run holds a stack in from (its latest release is not final), and
// when to already holds a different record under one of the keys; records
// already there unchanged are left alone, so an interrupted copy can be run
// again. A run that changes from while it copies makes it fail.
func Copy(ctx context.Context, from, to *Store, opts CopyOptions) (CopyReport, error) {
	if opts.Project != "" {
		if err := ValidateName("project", opts.Project); err != nil {
			return CopyReport{}, err
		}
	}
	before, err := heads(ctx, from, opts.Project)
	if err != nil {
		return CopyReport{}, err
	}
	keys, err := recordKeys(ctx, from, opts.Project)
	if err != nil {
		return CopyReport{}, err
	}
	sums := make([]string, len(keys))
	present := make([]bool, len(keys))
	var size atomic.Int64
	// Pass 1: hash the source, and find what the destination holds already.
	err = forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		data, _, err := from.d.Read(ctx, keys[i])
		if err != nil {
			return fmt.Errorf("read %s: %w", from.d.Where(keys[i]), err)
		}
		size.Add(int64(len(data)))
		sums[i] = digest(data)
		have, _, err := to.d.Read(ctx, keys[i])
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return fmt.Errorf("read %s: %w", to.d.Where(keys[i]), err)
		case digest(have) != sums[i]:
			return fmt.Errorf("%s already holds a different record than %s: refusing to overwrite it (copy into an empty backend, or remove it there first)",
				to.d.Where(keys[i]), from.d.Where(keys[i]))
		}
		present[i] = true
		return nil
	})
	if err != nil {
		return CopyReport{}, err
	}
	// Pass 2: write what is missing, create-only.
	err = forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		if present[i] {
			return nil
		}
		data, _, err := from.d.Read(ctx, keys[i])
		if err != nil {
			return fmt.Errorf("read %s: %w", from.d.Where(keys[i]), err)
		}
		if digest(data) != sums[i] {
			return fmt.Errorf("%s changed during the copy: is a run using it? run the copy again when none is", from.d.Where(keys[i]))
		}
		if _, err := to.write(ctx, keys[i], data, Condition{CreateOnly: true}); err != nil {
			return fmt.Errorf("write %s: %w", to.d.Where(keys[i]), err)
		}
		return nil
	})
	if err != nil {
		return CopyReport{}, err
	}
	// Pass 3: read every record back from the destination.
	err = forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		data, _, err := to.d.Read(ctx, keys[i])
		if err != nil {
			return fmt.Errorf("verify %s: %w", to.d.Where(keys[i]), err)
		}
		if digest(data) != sums[i] {
			return fmt.Errorf("verify %s: its SHA-256 is %s, the source's %s", to.d.Where(keys[i]), digest(data), sums[i])
		}
		return nil
	})
	if err != nil {
		return CopyReport{}, err
	}
	copied, err := recordKeys(ctx, to, opts.Project)
	if err != nil {
		return CopyReport{}, fmt.Errorf("verify: %w", err)
	}
	for _, k := range keys {
		if _, found := slices.BinarySearch(copied, k); !found {
			return CopyReport{}, fmt.Errorf("verify: %s was written but the destination does not list it", to.d.Where(k))
		}
	}
	after, err := heads(ctx, from, opts.Project)
	if err != nil {
		return CopyReport{}, err
	}
	for sw, h := range after {
		if before[sw] != h {
			return CopyReport{}, fmt.Errorf("%s changed during the copy (a run started?): run the copy again when no run is in flight", sw)
		}
	}
	rep := CopyReport{Records: len(keys), Bytes: size.Load()}
	h := sha256.New()
	for i, k := range keys {
		if present[i] {
			rep.Present++
		}
		fmt.Fprintf(h, "%s %s\n", k, sums[i])
	}
	rep.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return rep, nil
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// heads returns, for every project/workspace of from (of project, if set),
// its latest revision and version, and refuses while one is not final: a run
// holds that stack.
func heads(ctx context.Context, from *Store, project string) (map[string]string, error) {
	projects := []string{project}
	if project == "" {
		var err error
		if projects, err = dirsUnder(ctx, from, releasesDir); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	var mu sync.Mutex
	for _, p := range projects {
		workspaces, err := dirsUnder(ctx, from, releasesDir+"/"+p)
		if err != nil {
			return nil, err
		}
		err = forEach(ctx, len(workspaces), func(ctx context.Context, i int) error {
			w := workspaces[i]
			r, err := from.LatestRelease(ctx, p, w)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if !r.Phase.Final() {
				return fmt.Errorf("project %s workspace %s is held by run %s (revision %d is %s): wait for it to end, or cancel it, then copy",
					p, w, orUnknown(r.RunID), r.Revision, r.Phase)
			}
			mu.Lock()
			out[p+"/"+w] = fmt.Sprintf("#%d@%s", r.Revision, r.Version)
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// dirsUnder lists the subdirectories of dir whose names are valid names.
func dirsUnder(ctx context.Context, s *Store, dir string) ([]string, error) {
	ents, err := s.d.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.d.Where(dir), err)
	}
	var out []string
	for _, e := range ents {
		if e.Dir && ValidateName("directory", e.Name) == nil {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// recordKeys lists, sorted, every key of s a Copy with project copies.
func recordKeys(ctx context.Context, s *Store, project string) ([]string, error) {
	var keys []string
	if project == "" {
		for _, root := range RecordRoots {
			if err := walk(ctx, s.d, root, &keys); err != nil {
				return nil, err
			}
		}
		slices.Sort(keys)
		return keys, nil
	}
	for _, root := range []string{releasesDir + "/" + project, driftRoot + "/" + project, workspacesDir} {
		if err := walk(ctx, s.d, root, &keys); err != nil {
			return nil, err
		}
	}
	workspaces, err := dirsUnder(ctx, s, releasesDir+"/"+project)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for _, w := range workspaces {
		releases, err := s.ListReleaseSummaries(ctx, project, w)
		if err != nil {
			return nil, err
		}
		for _, sum := range releases {
			r := sum.Release
			// The run's spec, and the one a compact release file stores
			// apart (its state chunks are under the release's directory).
			named[specKey(r.SpecHash)] = r.SpecHash != ""
			named[specKey(sum.SpecRef)] = sum.SpecRef != ""
			if r.RunID != "" && ValidateName("run", r.RunID) == nil {
				if err := walk(ctx, s.d, runDir(r.RunID), &keys); err != nil {
					return nil, err
				}
			}
		}
	}
	for k, ok := range named {
		if !ok {
			continue
		}
		exists, err := s.d.Exists(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("look at %s: %w", s.d.Where(k), err)
		}
		if !exists {
			// A collection removing it meanwhile keeps it in the trash,
			// where the copy's readers look too.
			k = trashKey(k)
			if exists, err = s.d.Exists(ctx, k); err != nil {
				return nil, fmt.Errorf("look at %s: %w", s.d.Where(k), err)
			}
		}
		if exists {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// walk appends every key under dir.
func walk(ctx context.Context, d Driver, dir string, keys *[]string) error {
	ents, err := d.List(ctx, dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", d.Where(dir), err)
	}
	for _, e := range ents {
		k := dir + "/" + e.Name
		if e.Dir {
			if err := walk(ctx, d, k, keys); err != nil {
				return err
			}
			continue
		}
		*keys = append(*keys, k)
	}
	return nil
}

// RecordStore returns the Store itself, so that the backends embedding one
// (local, s3, postgres, tfhttp) give it to Copy.
func (s *Store) RecordStore() *Store { return s }
