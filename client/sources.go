package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/runspec"
)

// AddSource checks a git source against its repository and stores it: the
// ref resolves, the commit it is at fetches (into the home's cache), and its
// path is a stack inside the repository, whose project and stack names the
// source records. Nothing is stored when any of that fails.
func (c *Client) AddSource(ctx context.Context, src *gitsource.Source) error {
	err := c.addSource(ctx, src)
	return c.auditOwn(ctx, "source add", src.Project, "", "source "+src.Name, err)
}

func (c *Client) addSource(ctx context.Context, src *gitsource.Source) error {
	if err := backend.ValidateName("source", src.Name); err != nil {
		return err
	}
	if err := src.Validate(); err != nil {
		return err
	}
	if _, err := c.backend.GetSource(ctx, src.Name); err == nil {
		return fmt.Errorf("source %s already exists: remove it first (`kumo source remove %s`)", src.Name, src.Name)
	} else if !errors.Is(err, backend.ErrNotFound) {
		return err
	}
	for _, f := range []string{src.Auth.TokenFile, src.Auth.SSHKeyFile, src.KnownHosts, src.WebhookSecretFile} {
		if f != "" && !filepath.IsAbs(f) {
			return fmt.Errorf("source %s: %s: give credential files by absolute path (the worker and server read them)", src.Name, f)
		}
	}
	if f := src.WebhookSecretFile; f != "" {
		if _, err := readWebhookSecret(f); err != nil {
			return fmt.Errorf("source %s: --webhook-secret-file: %w", src.Name, err)
		}
	}
	g := gitsource.Git{Cache: SourceCacheDir(c.opts.Home)}
	commit, err := g.Resolve(ctx, src)
	if err != nil {
		return err
	}
	lease, err := g.Checkout(ctx, src, commit)
	if err != nil {
		return err
	}
	defer lease.Release()
	dir := lease.Dir
	stack, err := generate.Load(filepath.Join(dir, filepath.FromSlash(src.Path)))
	if err != nil {
		return fmt.Errorf("source %s at %.12s: %w", src.Name, commit, err)
	}
	if rel, err := filepath.Rel(dir, stack.Project.Dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return fmt.Errorf("source %s at %.12s: no project.yaml at or above path %q inside the repository", src.Name, commit, src.Path)
	}
	src.Project, src.Stack = stack.Project.Name, stack.Stack.Name
	err = c.backend.PutSource(ctx, src, true)
	if errors.Is(err, backend.ErrExists) {
		return fmt.Errorf("source %s already exists: remove it first (`kumo source remove %s`)", src.Name, src.Name)
	}
	return err
}

// readWebhookSecret reads an HMAC secret file: not empty, at least 16 bytes.
func readWebhookSecret(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if len(data) > 4096 {
		return nil, fmt.Errorf("%s: %d bytes, want a secret of at most 4096", file, len(data))
	}
	secret := []byte(strings.TrimSpace(string(data)))
	if len(secret) < 16 {
		return nil, fmt.Errorf("%s: a webhook secret needs at least 16 characters", file)
	}
	return secret, nil
}

// Source returns a stored git source.
func (c *Client) Source(ctx context.Context, name string) (*gitsource.Source, error) {
	src, err := c.backend.GetSource(ctx, name)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("source %s does not exist (kumo source list)", name)
	}
	return src, err
}

// Sources returns every stored git source, by name.
func (c *Client) Sources(ctx context.Context) ([]*gitsource.Source, error) {
	names, err := c.backend.ListSources(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*gitsource.Source, 0, len(names))
	for _, n := range names {
		s, err := c.backend.GetSource(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// RemoveSource deletes a stored git source (its releases keep naming it).
func (c *Client) RemoveSource(ctx context.Context, name string) error {
	src, err := c.Source(ctx, name)
	if err != nil {
		return err
	}
	return c.auditOwn(ctx, "source remove", src.Project, "", "source "+name, c.backend.DeleteSource(ctx, name))
}

// gitSource resolves req's git source to the commit its ref is at (one
// ls-remote), or req.GitCommit, and makes in generate from that commit: the
// run's release, summary and details name it.
func (c *Client) gitSource(ctx context.Context, req *Request, in *runspec.RunInput) error {
	src, err := c.Source(ctx, req.GitSource)
	if err != nil {
		return err
	}
	if req.Project != src.Project {
		return fmt.Errorf("source %s deploys project %q, not %q", src.Name, src.Project, req.Project)
	}
	commit := req.GitCommit
	if commit == "" {
		if commit, err = (&gitsource.Git{}).Resolve(ctx, src); err != nil {
			return err
		}
	} else if err := gitsource.CheckCommit(commit); err != nil {
		return err
	}
	o := &engine.GitOrigin{Source: src.Name, URL: src.URL, Ref: src.Ref, Commit: commit, Path: src.Path}
	req.Stack, req.git = src.Stack, o
	in.Stack, in.Git = src.Stack, o
	in.Label.SourceCommit = commit
	in.Source = &runspec.GenerateInput{Project: req.Project, Workspace: req.Workspace, GeneratorTimeout: req.GeneratorTimeout, Git: o}
	return nil
}

// ErrNoDefaultSource: a run names no stack, spec or source, and its
// workspace has no default source.
var ErrNoDefaultSource = errors.New("no default source")

// DefaultSource is the git source workspace's sources.default names.
func (c *Client) DefaultSource(ctx context.Context, workspace string) (string, error) {
	ws, err := c.Workspace(ctx, workspace)
	if err != nil {
		return "", err
	}
	if ws.Sources.Default == "" {
		return "", fmt.Errorf("workspace %s has %w (sources.default): name a git source (--source NAME), a stack directory (--stack DIR) or a spec (-f FILE)", workspace, ErrNoDefaultSource)
	}
	return ws.Sources.Default, nil
}

// checkWorkspaceSources refuses a workspace whose default source does not
// exist (a later run would fail on it instead).
func (c *Client) checkWorkspaceSources(ctx context.Context, ws *engine.Workspace) error {
	if name := ws.Sources.Default; name != "" {
		if _, err := c.Source(ctx, name); err != nil {
			return fmt.Errorf("workspace %s: sources.default: %w", ws.Name, err)
		}
	}
	return nil
}
