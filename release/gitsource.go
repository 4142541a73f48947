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
func (m *Manager) loadGitStack(ctx context.Context, in runspec.GenerateInput, log io.Writer) (*generate.Source, error) {
	o := in.Git
	src, err := m.backend.GetSource(ctx, o.Source)
	if err != nil {
		return nil, kindErr(ErrGenerate, err)
	}
	if src.Project != in.Project {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s deploys project %q, not %q", src.Name, src.Project, in.Project))
	}
	if src.URL != o.URL || src.Ref != o.Ref || src.Path != o.Path {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s changed since the run started (now %s@%s path %q; the run has %s@%s path %q): start it again",
			src.Name, src.URL, src.Ref, src.Path, o.URL, o.Ref, o.Path))
	}
	if err := gitsource.CheckCommit(o.Commit); err != nil {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s: %w", src.Name, err))
	}
	if m.generation.SourceCache == "" {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s: this worker has no git source cache (it reads no git source)", src.Name))
	}
	g := gitsource.Git{Cache: m.generation.SourceCache}
	if err := m.verifyCommit(ctx, &g, src, o.Commit, in.Workspace); err != nil {
		return nil, err
	}
	checkout, err := g.Fetch(ctx, src, o.Commit)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "source %s: %s@%s at commit %s, path %q\n", src.Name, src.URL, src.Ref, o.Commit, src.Path)
	root, err := filepath.EvalSymlinks(checkout)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(src.Path)))
	if err != nil {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: path %q: %w", src.Name, o.Commit, src.Path, err))
	}
	stack, err := generate.Load(dir)
	if err != nil {
		return nil, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: %w", src.Name, o.Commit, err))
	}
	for _, d := range []string{dir, stack.Project.Dir} {
		if rel, err := filepath.Rel(root, d); err != nil || !filepath.IsLocal(rel) && rel != "." {
			return nil, kindErr(ErrGenerate, fmt.Errorf("source %s at %.12s: %s lies outside the repository (no project.yaml at or above path %q inside it)", src.Name, o.Commit, d, src.Path))
		}
	}
	return stack, nil
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
