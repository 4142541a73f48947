// Package local is the default kumo backend: releases, specs and in-flight state
// as files under one root directory ($KUMO_HOME, resolved by the caller).
//
// Layout under the root:
//
//	releases/<project>/<workspace>/<revision>.yaml          one engine.Release per file
//	releases/<project>/<workspace>/<revision>.state/<h>.json one backend.StateEntry per
//	                                                        resource of a running release
//	                                                        (<h> = sha256 of the resource ID)
//	releases/<project>/<workspace>/.lock                    flock serializing writers
//	specs/<hash>.yaml                                       specs by content hash
//	workspaces/<name>.yaml                                  one engine.Workspace per file
//	runs/<run ID>/<part>.log                                the parts of a run's log
//
// Every write goes to a temporary file (named .tmp-*, which readers skip) in the
// target directory, is fsynced, and is then renamed into place, or hard-linked
// for CreateRelease so that an existing revision is never replaced; the directory is
// fsynced afterwards. A reader therefore never sees a half-written file, and a
// write that returned survives a killed process or a power cut. Release writers of
// one project/workspace hold an flock on its lock file, which excludes other
// processes as well as other goroutines.
//
// Project and workspace names are checked with backend.ValidateName before they
// become paths, so no name can reach outside the root.
package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
	"github.com/kumoproj/kumo/engine"
)

// Backend stores kumo's records in a directory tree. It is safe for concurrent use
// by goroutines and by processes sharing the root.
type Backend struct {
	root    string
	written atomic.Int64
}

// BytesWritten is how many bytes this Backend has written to files, overwrites
// included: the figure that must stay linear in the size of an apply.
func (b *Backend) BytesWritten() int64 { return b.written.Load() }

var _ backend.Backend = (*Backend)(nil)

const (
	releasesDir = "releases"
	specsDir    = "specs"
	lockName    = ".lock"
	releaseExt  = ".yaml"
	stateExt    = ".state"
)

// New returns a backend rooted at root, creating the directory if needed.
func New(root string) (*Backend, error) {
	if root == "" {
		return nil, errors.New("local backend: root directory is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("local backend: root %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		return nil, fmt.Errorf("local backend: create root %s: %w", abs, err)
	}
	return &Backend{root: abs}, nil
}

// Root returns the absolute root directory.
func (b *Backend) Root() string { return b.root }

func (b *Backend) workspaceDir(project, workspace string) string {
	return filepath.Join(b.root, releasesDir, project, workspace)
}

func (b *Backend) releasePath(project, workspace string, revision int) string {
	return filepath.Join(b.workspaceDir(project, workspace), strconv.Itoa(revision)+releaseExt)
}

func (b *Backend) stateDir(k backend.ReleaseKey) string {
	return filepath.Join(b.workspaceDir(k.Project, k.Workspace), strconv.Itoa(k.Revision)+stateExt)
}

func (b *Backend) specPath(hash string) string {
	return filepath.Join(b.root, specsDir, hash+releaseExt)
}

func validateWorkspace(project, workspace string) error {
	if err := backend.ValidateName("project", project); err != nil {
		return err
	}
	return backend.ValidateName("workspace", workspace)
}

// versionOf is a release file's version: the hash of its bytes. Every write of a
// release changes ModifyTime, so two different copies never share a version.
func versionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// lock takes the writers' lock of a project/workspace, creating its directory.
func (b *Backend) lock(project, workspace string) (func(), error) {
	dir := b.workspaceDir(project, workspace)
	if err := ensureDir(b.root, dir); err != nil {
		return nil, err
	}
	return lockFile(filepath.Join(dir, lockName))
}

// PutSpec stores spec under its content hash. A spec already stored is not rewritten.
func (b *Backend) PutSpec(ctx context.Context, spec *engine.Spec) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if spec == nil {
		return "", errors.New("put spec: spec is nil")
	}
	hash := engine.HashSpec(spec)
	path := b.specPath(hash)
	if _, err := os.Stat(path); err == nil {
		return hash, nil
	}
	data, err := codec.EncodeYAML(spec)
	if err != nil {
		return "", fmt.Errorf("put spec %s: encode: %w", hash, err)
	}
	if err := ensureDir(b.root, filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("put spec %s: %w", hash, err)
	}
	b.written.Add(int64(len(data)))
	if err := replaceFile(path, data); err != nil {
		return "", fmt.Errorf("put spec %s: %w", hash, err)
	}
	return hash, nil
}

// GetSpec returns the spec stored under hash. An unknown or malformed hash gives an
// error wrapping backend.ErrNotFound.
func (b *Backend) GetSpec(ctx context.Context, hash string) (*engine.Spec, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := codec.CheckSpecHash(hash); err != nil {
		return nil, err
	}
	path := b.specPath(hash)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("spec %s: %w", hash, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", hash, err)
	}
	return codec.DecodeSpec(hash, path, data)
}

// CreateRelease stores r as a new revision, which must be the latest revision + 1
// (1 for the first). A revision already taken gives backend.ErrRevisionExists; any
// other revision (a gap, or less than 1) is refused.
func (b *Backend) CreateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, data, err := codec.EncodeRelease("create", r)
	if err != nil {
		return err
	}
	unlock, err := b.lock(r.Project, r.Workspace)
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	defer unlock()

	path := b.releasePath(r.Project, r.Workspace, r.Revision)
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("create release %s: %w", key, backend.ErrRevisionExists)
	}
	revs, err := b.revisions(r.Project, r.Workspace)
	if err != nil {
		return fmt.Errorf("create release %s: %w", key, err)
	}
	latest := 0
	if len(revs) > 0 {
		latest = revs[len(revs)-1]
	}
	if r.Revision <= latest {
		// Only reachable if a revision file was removed by hand.
		return fmt.Errorf("create release %s: %w (latest revision is %d)", key, backend.ErrRevisionExists, latest)
	}
	if r.Revision != latest+1 {
		return fmt.Errorf("create release %s: revision %d would leave a gap: the latest revision of %s/%s is %d, so the next one must be %d",
			key, r.Revision, r.Project, r.Workspace, latest, latest+1)
	}
	b.written.Add(int64(len(data)))
	if err := createFile(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create release %s: %w", key, backend.ErrRevisionExists)
		}
		return fmt.Errorf("create release %s: %s: %w", key, path, err)
	}
	r.Version = versionOf(data)
	return nil
}

// UpdateRelease replaces an existing revision if its file still holds the copy r was
// read as (compared by content hash under the writers' lock); a missing one gives
// backend.ErrNotFound, a changed one backend.ErrConflict.
func (b *Backend) UpdateRelease(ctx context.Context, r *engine.Release) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, data, err := codec.EncodeRelease("update", r)
	if err != nil {
		return err
	}
	path := b.releasePath(r.Project, r.Workspace, r.Revision)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Checked again under the lock; this avoids creating directories for nothing.
		return fmt.Errorf("update release %s: %w", key, backend.ErrNotFound)
	}
	unlock, err := b.lock(r.Project, r.Workspace)
	if err != nil {
		return fmt.Errorf("update release %s: %w", key, err)
	}
	defer unlock()
	current, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("update release %s: %w", key, backend.ErrNotFound)
		}
		return fmt.Errorf("update release %s: %w", key, err)
	}
	if r.Version == "" {
		return fmt.Errorf("update release %s: the release has no version: read it from the backend before updating it", key)
	}
	if v := versionOf(current); v != r.Version {
		return fmt.Errorf("update release %s: %w (read as version %s, stored version is %s)", key, backend.ErrConflict, r.Version, v)
	}
	b.written.Add(int64(len(data)))
	if err := replaceFile(path, data); err != nil {
		return fmt.Errorf("update release %s: %w", key, err)
	}
	r.Version = versionOf(data)
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
	return b.readRelease(key)
}

func (b *Backend) readRelease(key backend.ReleaseKey) (*engine.Release, error) {
	path := b.releasePath(key.Project, key.Workspace, key.Revision)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("release %s: %w", key, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	r, err := codec.DecodeRelease(key, path, data)
	if err != nil {
		return nil, err
	}
	r.Version = versionOf(data)
	return r, nil
}

// LatestRelease returns the highest revision, or an error wrapping
// backend.ErrNotFound when there is none. Only that revision's file is read.
func (b *Backend) LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("latest release: %w", err)
	}
	revs, err := b.revisions(project, workspace)
	if err != nil {
		return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, err)
	}
	if len(revs) == 0 {
		return nil, fmt.Errorf("latest release of %s/%s: %w", project, workspace, backend.ErrNotFound)
	}
	return b.readRelease(backend.ReleaseKey{Project: project, Workspace: workspace, Revision: revs[len(revs)-1]})
}

// ListReleases returns every revision in ascending order; none gives an empty list.
func (b *Backend) ListReleases(ctx context.Context, project, workspace string) ([]*engine.Release, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	revs, err := b.revisions(project, workspace)
	if err != nil {
		return nil, fmt.Errorf("list releases of %s/%s: %w", project, workspace, err)
	}
	out := make([]*engine.Release, 0, len(revs))
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := b.readRelease(backend.ReleaseKey{Project: project, Workspace: workspace, Revision: rev})
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// revisions returns the revisions present in a workspace directory, ascending, from
// file names alone (temp files and state directories are skipped).
func (b *Backend) revisions(project, workspace string) ([]int, error) {
	dir := b.workspaceDir(project, workspace)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var revs []int
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if n, ok := parseRevisionFile(e.Name()); ok {
			revs = append(revs, n)
		}
	}
	slices.Sort(revs)
	return revs, nil
}

// parseRevisionFile parses "<revision>.yaml" with revision ≥ 1 in canonical form.
func parseRevisionFile(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, releaseExt)
	if !ok || base == "" || base[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(base)
	if err != nil || n < 1 || strconv.Itoa(n) != base {
		return 0, false
	}
	return n, true
}

// PutStateEntry records one resource's outcome for a release, replacing any earlier
// entry for the same ID. The release must exist (else backend.ErrNotFound). It
// writes one small file, so an apply writes bytes linear in its size.
func (b *Backend) PutStateEntry(ctx context.Context, key backend.ReleaseKey, entry backend.StateEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("put state entry: %w", err)
	}
	if entry.ID == "" {
		return fmt.Errorf("put state entry of %s: resource ID is empty", key)
	}
	if _, err := os.Stat(b.releasePath(key.Project, key.Workspace, key.Revision)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("put state entry %s of %s: release %w", entry.ID, key, backend.ErrNotFound)
		}
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	data, err := codec.EncodeJSON(entry)
	if err != nil {
		return fmt.Errorf("put state entry %s of %s: encode: %w", entry.ID, key, err)
	}
	dir := b.stateDir(key)
	if err := ensureDir(b.root, dir); err != nil {
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	b.written.Add(int64(len(data)))
	if err := replaceFile(filepath.Join(dir, codec.EntryName(entry.ID)), data); err != nil {
		return fmt.Errorf("put state entry %s of %s: %w", entry.ID, key, err)
	}
	return nil
}

// GetStateEntry returns the entry for id, and whether there is one.
func (b *Backend) GetStateEntry(ctx context.Context, key backend.ReleaseKey, id string) (backend.StateEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return backend.StateEntry{}, false, err
	}
	if err := key.Validate(); err != nil {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry: %w", err)
	}
	path := filepath.Join(b.stateDir(key), codec.EntryName(id))
	e, err := readEntry(path)
	if errors.Is(err, fs.ErrNotExist) {
		return backend.StateEntry{}, false, nil
	}
	if err != nil {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %w", id, key, err)
	}
	if e.ID != id {
		return backend.StateEntry{}, false, fmt.Errorf("get state entry %s of %s: %s holds %q", id, key, path, e.ID)
	}
	return e, true, nil
}

// ListStateEntries returns every entry of the release by resource ID; a release
// without entries (or without state at all) gives an empty map.
func (b *Backend) ListStateEntries(ctx context.Context, key backend.ReleaseKey) (map[string]backend.StateEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := key.Validate(); err != nil {
		return nil, fmt.Errorf("list state entries: %w", err)
	}
	dir := b.stateDir(key)
	out := map[string]backend.StateEntry{}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list state entries of %s: %w", key, err)
	}
	for _, de := range ents {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || !de.Type().IsRegular() {
			continue
		}
		e, err := readEntry(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // cleared meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list state entries of %s: %w", key, err)
		}
		out[e.ID] = e
	}
	return out, nil
}

// ClearStateEntries drops every entry of the release. The state directory is first
// renamed away, so readers see all entries or none.
func (b *Backend) ClearStateEntries(ctx context.Context, key backend.ReleaseKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("clear state entries: %w", err)
	}
	dir := b.stateDir(key)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	parent := filepath.Dir(dir)
	trash, err := os.MkdirTemp(parent, tmpPrefix+"clear-*")
	if err != nil {
		return fmt.Errorf("clear state entries of %s: %w", key, err)
	}
	moved := filepath.Join(trash, "state")
	if err := os.Rename(dir, moved); err != nil {
		_ = os.Remove(trash)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // cleared concurrently
		}
		return fmt.Errorf("clear state entries of %s: rename %s: %w", key, dir, err)
	}
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("clear state entries of %s: %w", key, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("clear state entries of %s: remove %s: %w", key, trash, err)
	}
	return syncDir(parent)
}

func readEntry(path string) (backend.StateEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return backend.StateEntry{}, err
	}
	return codec.DecodeEntry(path, data)
}
