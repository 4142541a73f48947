package gitsource

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// RepoKey names a repository's directory in the cache: a digest of its URL,
// so a URL never becomes a path.
func RepoKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:8])
}

// ErrTooLarge: a fetch or its tree is over the Limits.
var ErrTooLarge = errors.New("over the size limit")

// Fetch returns the directory holding commit's tree of s's repository,
// fetching it first unless the cache has it: a shallow fetch of that one
// commit (no tags, no submodules), its tree written out by git archive and
// checked as it is written (paths inside the checkout, sizes, symlinks
// resolving inside it), then moved into place, so a directory in the cache is
// always a whole, checked tree.
func (g *Git) Fetch(ctx context.Context, s *Source, commit string) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	if err := CheckCommit(commit); err != nil {
		return "", err
	}
	if g.Cache == "" {
		return "", errors.New("this worker has no git source cache directory")
	}
	repoDir := filepath.Join(g.Cache, RepoKey(s.URL))
	final := filepath.Join(repoDir, commit)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(repoDir, 0o700); err != nil {
		return "", err
	}
	gitDir, err := os.MkdirTemp(repoDir, ".fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gitDir)
	if err := g.run(ctx, s, gitDir, io.Discard, "init", "--bare", "--quiet", "."); err != nil {
		return "", err
	}
	if err := g.fetch(ctx, s, gitDir, commit); err != nil {
		return "", err
	}
	if err := g.keepCommitObject(ctx, s, gitDir, commit); err != nil {
		return "", err
	}
	tree, err := os.MkdirTemp(repoDir, ".tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree) // gone once renamed; left over only on failure
	if err := g.archive(ctx, s, gitDir, commit, tree); err != nil {
		return "", fmt.Errorf("source %s at %.12s: %w", s.Name, commit, err)
	}
	if err := os.Rename(tree, final); err != nil {
		if fi, serr := os.Stat(final); serr == nil && fi.IsDir() {
			return final, nil // another fetch of the same commit finished first
		}
		return "", err
	}
	return final, nil
}

// fetch downloads the one commit, watching the objects it writes: past
// FetchBytes git is stopped (git itself has no limit for a fetch).
func (g *Git) fetch(ctx context.Context, s *Source, gitDir, commit string) error {
	l := g.limits()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var over atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if dirSize(gitDir) > l.FetchBytes {
					over.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	err := g.run(ctx, s, gitDir, io.Discard, "fetch", "--quiet", "--depth=1", "--no-tags", "--no-recurse-submodules", "--", s.URL, commit)
	cancel()
	<-done
	if over.Load() || dirSize(gitDir) > l.FetchBytes {
		return fmt.Errorf("source %s: fetching commit %.12s of %s: %w (%d MiB of git objects)", s.Name, commit, s.URL, ErrTooLarge, l.FetchBytes>>20)
	}
	if err != nil {
		return fmt.Errorf("source %s: fetching commit %.12s: %w", s.Name, commit, err)
	}
	return nil
}

// dirSize is the bytes of the files under dir (what a fetch wrote so far).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// archive writes commit's tree into dir through git archive, checking every
// entry as it comes.
func (g *Git) archive(ctx context.Context, s *Source, gitDir, commit, dir string) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := g.run(ctx, s, gitDir, pw, "archive", "--format=tar", commit)
		pw.CloseWithError(err)
		errc <- err
	}()
	err := extract(pr, dir, g.limits())
	if err == nil {
		// The end-of-archive padding git writes after the last entry.
		_, err = io.Copy(io.Discard, io.LimitReader(pr, 1<<20))
	}
	pr.CloseWithError(errors.New("extraction stopped"))
	gitErr := <-errc
	if err != nil {
		return err
	}
	return gitErr
}

type link struct{ name, target string }

// extract writes a git archive's entries under dir: directories, regular
// files (mode 0644, or 0755 when git records them executable) and symlinks,
// made last and then resolved, each of which must lead to something inside
// dir. Anything else, a path outside dir, or a tree over the limits fails the
// whole extraction.
func extract(r io.Reader, dir string, l Limits) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	tr := tar.NewReader(r)
	var total int64
	files := 0
	var links []link
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the tree: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader { // git archive's commit ID comment
			continue
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !filepath.IsLocal(name) {
			return fmt.Errorf("path %q leads out of the repository", h.Name)
		}
		files++
		if files > l.Files {
			return fmt.Errorf("more than %d files: %w", l.Files, ErrTooLarge)
		}
		p := filepath.Join(root, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if total > l.TreeBytes {
				return fmt.Errorf("the tree is over %d MiB: %w", l.TreeBytes>>20, ErrTooLarge)
			}
			if err := writeFile(p, tr, h); err != nil {
				return err
			}
		case tar.TypeSymlink:
			links = append(links, link{name, h.Linkname})
		default:
			return fmt.Errorf("%s: entry type %q is not a file, directory or symlink", name, h.Typeflag)
		}
	}
	return makeLinks(root, links)
}

func writeFile(p string, r io.Reader, h *tar.Header) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if h.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, io.LimitReader(r, h.Size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// makeLinks creates the symlinks after every file and directory, so nothing
// is ever written through one, then resolves each: a link that leads out of
// root (directly, or through another link) or to nothing is refused.
func makeLinks(root string, links []link) error {
	slices.SortFunc(links, func(a, b link) int { return strings.Compare(a.name, b.name) })
	for i, ln := range links {
		// A link inside another link's path would be created through it.
		if i > 0 && strings.HasPrefix(ln.name, links[i-1].name+"/") {
			return fmt.Errorf("symlink %s lies under symlink %s", ln.name, links[i-1].name)
		}
		p := filepath.Join(root, ln.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(ln.target, p); err != nil {
			return err
		}
	}
	for _, ln := range links {
		resolved, err := filepath.EvalSymlinks(filepath.Join(root, ln.name))
		if err != nil || !within(resolved, root) {
			return fmt.Errorf("symlink %s -> %s leads out of the repository (or to nothing in it)", ln.name, ln.target)
		}
	}
	return nil
}

func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}
