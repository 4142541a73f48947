package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/runspec"
)

// loadGitStack fetches the commit in.Git names of the source stored under
// its name (the run carries no URL or credential the worker would trust: the
// backend's record, which only administrators write, says where and how)
// and loads the stack at the source's path. The stack and its project must
// lie inside the checkout.
//
// The checkout is held (a gitsource.Lease, which cache eviction leaves
// alone) until the caller calls done, after generating from it; the cache
// is then kept within gitsource.DefaultCacheBounds.
func (m *Manager) loadGitStack(ctx context.Context, in runspec.GenerateInput, log io.Writer) (stack *generate.Source, done func(), err error) {
	g := gitsource.Git{Cache: m.generation.SourceCache}
	var lease *gitsource.Lease
	done = func() {
		lease.Release()
		rep, ran, err := g.MaybeEvict(gitsource.DefaultCacheBounds)
		switch {
		case err != nil:
			fmt.Fprintf(log, "source cache: eviction stopped: %v\n", err)
		case ran && rep.Removed > 0:
			fmt.Fprintf(log, "source cache: removed %d checkout(s) (%d MiB); %d MiB left, %d over the bounds kept in use\n", rep.Removed, rep.FreedBytes>>20, rep.Bytes>>20, rep.InUse)
		}
	}
	stack, lease, err = m.loadGitCheckout(ctx, &g, in, log)
	if err != nil {
		lease.Release()
		return nil, func() {}, err
	}
	return stack, done, nil
}

func (m *Manager) loadGitCheckout(ctx context.Context, g *gitsource.Git, in runspec.GenerateInput, log io.Writer) (*generate.Source, *gitsource.Lease, error) {
	o := in.Git
	src, err := m.backend.GetSource(ctx, o.Source)
	if err != nil {
		return nil, nil, kindErr(ErrGenerate, err)
	}
	if src.Project != in.Project {
		return nil, nil, kindErr(ErrGenerate, fmt.Errorf("source %s deploys project %q, not %q", src.Name, src.Project, in.Project))
	}
	if src.URL != o.URL || src.Ref != o.Ref || src.Path != o.Path {
		return nil, nil, kindErr(ErrGenerate, fmt.Errorf("source %s changed since the run started (now %s@%s path %q; the run has %s@%s path %q): start it again",
			src.Name, src.URL, src.Ref, src.Path, o.URL, o.Ref, o.Path))
	}
	if err := gitsource.CheckCommit(o.Commit); err != nil {
		return nil, nil, kindErr(ErrGenerate, fmt.Errorf("source %s: %w", src.Name, err))
	}
	if m.generation.SourceCache == "" {
		return nil, nil, kindErr(ErrGenerate, fmt.Errorf("source %s: this worker has no git source cache (it reads no git source)", src.Name))
	}
	if err := m.verifyCommit(ctx, g, src, o.Commit, in.Workspace); err != nil {
		return nil, nil, err
	}
	lease, err := g.Checkout(ctx, src, o.Commit)
	if err != nil {
		return nil, nil, err
	}
	checkout := lease.Dir
	fmt.Fprintf(log, "source %s: %s@%s at commit %s, path %q\n", src.Name, src.URL, src.Ref, o.Commit, src.Path)
	root, err := filepath.EvalSymlinks(checkout)
	if err != nil {
		return nil, lease, err
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(src.Path)))
	if err != nil {
		return nil, lease, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: path %q: %w", src.Name, o.Commit, src.Path, err))
	}
	stack, err := generate.Load(dir)
	if err != nil {
		return nil, lease, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: %w", src.Name, o.Commit, err))
	}
	for _, d := range []string{dir, stack.Project.Dir} {
		if rel, err := filepath.Rel(root, d); err != nil || !filepath.IsLocal(rel) && rel != "." {
			return nil, lease, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: %s lies outside the repository (no project.yaml at or above path %q inside it)", src.Name, o.Commit, d, src.Path))
		}
	}
	return stack, lease, nil
}

// verifyCommit refuses, when the workspace requires signed commits, a commit
// not signed by one of the keys its administrators allowed: before the
// stack is even read, so nothing of it is generated or applied.
func (m *Manager) verifyCommit(ctx context.Context, g *gitsource.Git, src *gitsource.Source, commit, workspace string) error {
	ws, err := LoadWorkspace(ctx, m.backend, workspace)
	if err != nil {
		return kindErr(ErrGenerate, err)
	}
	req := ws.Sources
	if !req.RequireSignedCommits {
		return nil
	}
	err = g.Verify(ctx, src, commit, gitsource.SigningKeys{AllowedSignersFile: req.AllowedSignersFile, GPGKeyringFile: req.GPGKeyringFile})
	if errors.Is(err, gitsource.ErrUnsigned) {
		return kindErr(ErrGenerate, fmt.Errorf("workspace %s requires signed commits (sources.requireSignedCommits): source %s (%s@%s): %w", workspace, src.Name, src.URL, src.Ref, err))
	}
	if err != nil {
		return fmt.Errorf("workspace %s: checking the signature of commit %s of source %s: %w", workspace, commit, src.Name, err)
	}
	return nil
}
