package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/kumoproj/kumo/backend"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/worker"
)

// Releases lists every revision of project+workspace, oldest first.
func (c *Client) Releases(ctx context.Context, project, workspace string) ([]*engine.Release, error) {
	return c.backend.ListReleases(ctx, project, workspace)
}

// ReleaseSummaries lists every revision of project+workspace, oldest first,
// without their specs and states (backend.ReleaseSummary): what a listing
// needs, read from the release files alone.
func (c *Client) ReleaseSummaries(ctx context.Context, project, workspace string) ([]backend.ReleaseSummary, error) {
	return c.backend.ListReleaseSummaries(ctx, project, workspace)
}

// Release returns one revision; 0 means the latest.
func (c *Client) Release(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if revision == 0 {
		return release.New(c.backend, nil, nil).Latest(ctx, project, workspace)
	}
	return c.backend.GetRelease(ctx, project, workspace, revision)
}

// DiffReleases compares the specs of two revisions of project+workspace,
// resource by resource and field by field (never nil: no differences is an
// empty list).
func (c *Client) DiffReleases(ctx context.Context, project, workspace string, from, to int) ([]engine.SpecChange, error) {
	var rels [2]*engine.Release
	for i, n := range []int{from, to} {
		r, err := c.Release(ctx, project, workspace, n)
		if err != nil {
			return nil, err
		}
		if r.Spec == nil {
			r.Spec = &engine.Spec{}
		}
		rels[i] = r
	}
	changes := engine.DiffSpecs(engine.ReleaseSpec(rels[0]), engine.ReleaseSpec(rels[1]))
	if changes == nil {
		changes = []engine.SpecChange{}
	}
	return changes, nil
}

// ErrNotLocked is wrapped by Unlock's error when the latest release is final:
// there is nothing to unlock.
var ErrNotLocked = release.ErrNotLocked

// ErrNoReleases is wrapped by Unlock's error when the stack has no release.
var ErrNoReleases = release.ErrNoRelease

// Unlock closes the latest release as failed when it was left unfinished by a run
// that is no longer running. It refuses, naming the run, while that run is alive.
func (c *Client) Unlock(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := release.New(c.backend, nil, lazyRunChecker{c}).Unlock(ctx, project, workspace)
	target := "releases of " + project + "/" + workspace
	if r != nil {
		target = fmt.Sprintf("revision %d of %s/%s", r.Revision, project, workspace)
	}
	return r, c.auditOwn(ctx, "release unlock", project, workspace, target, err)
}

// lazyRunChecker connects to Temporal only when a run must be checked, so
// unlocking a release that needs no unlocking does not start a server. It
// dials without a worker: starting one would resume the very run being checked.
type lazyRunChecker struct{ c *Client }

func (l lazyRunChecker) Running(ctx context.Context, workflowID, runID string) (bool, error) {
	tc, err := l.c.dial(ctx)
	if err != nil {
		return false, err
	}
	return worker.RunChecker(tc).Running(ctx, workflowID, runID)
}

func (l lazyRunChecker) QueuedSpecs(ctx context.Context) ([]string, error) {
	tc, err := l.c.dial(ctx)
	if err != nil {
		return nil, err
	}
	// The embedded server's queues are answered by this process.
	if err := l.c.answerQueries(); err != nil {
		return nil, err
	}
	return worker.RunChecker(tc).QueuedSpecs(ctx)
}

// MaskRelease shows r's sensitive values (Secret data, sensitive Terraform
// attributes) as engine.Masked, in its spec and its state.
func MaskRelease(r *engine.Release) {
	if r.Spec != nil {
		// Masked as the state says; shown without the runtime's marks.
		spec := engine.ReleaseSpec(r)
		masked := engine.MaskResources(spec.Resources)
		for i := range masked {
			masked[i].Extensions = r.Spec.Resources[i].Extensions
		}
		spec.Resources = masked
		if len(spec.Hooks) > 0 {
			// A hook Secret's data is masked as a resource's is.
			spec.Hooks = slices.Clone(spec.Hooks)
			for i, h := range spec.Hooks {
				spec.Hooks[i].Attributes = engine.MaskSensitive(engine.Resource{ID: h.ID, Type: engine.Kubernetes, Attributes: h.Attributes}).Attributes
			}
		}
		r.Spec = spec
	}
	if r.State != nil {
		r.State = &engine.State{Resources: engine.MaskResources(r.State.Resources)}
	}
}
