package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/worker"
)

// Releases lists every revision of project+workspace, oldest first.
func (c *Client) Releases(ctx context.Context, project, workspace string) ([]*engine.Release, error) {
	return c.backend.ListReleases(ctx, project, workspace)
}

// Release returns one revision; 0 means the latest.
func (c *Client) Release(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	if revision == 0 {
		r, err := c.backend.LatestRelease(ctx, project, workspace)
		if errors.Is(err, backend.ErrNotFound) {
			return nil, fmt.Errorf("%s/%s has no releases yet", project, workspace)
		}
		return r, err
	}
	return c.backend.GetRelease(ctx, project, workspace, revision)
}

// Unlock closes the latest release as failed when it was left unfinished by a run
// that is no longer running. It refuses, naming the run, while that run is alive.
func (c *Client) Unlock(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := c.Release(ctx, project, workspace, 0)
	if err != nil {
		return nil, err
	}
	if r.Phase.Final() {
		return nil, fmt.Errorf("nothing to unlock: revision %d of %s/%s is %s", r.Revision, project, workspace, r.Phase)
	}
	// No worker: starting one would resume the very run being checked.
	tc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	checker := worker.RunChecker(tc)
	running, err := checker.Running(ctx, r.WorkflowID, r.RunID)
	if err != nil {
		return nil, fmt.Errorf("check run %s: %w", r.RunID, err)
	}
	if running {
		return nil, fmt.Errorf("revision %d of %s/%s is %s by run %s (workflow %s), which is still running; follow it with `kumo resume` instead of unlocking",
			r.Revision, project, workspace, r.Phase, r.RunID, r.WorkflowID)
	}
	acts := activities.New(c.backend, worker.NewRuntimes(), checker)
	key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: r.Revision}
	if _, err := acts.FinishRelease(ctx, activities.FinishInput{Key: key, Phase: engine.PhaseFailed, Error: "unlocked by `kumo release unlock`: its run " + r.RunID + " ended without finishing it"}); err != nil {
		return nil, err
	}
	return c.backend.GetRelease(ctx, project, workspace, r.Revision)
}
