package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// DriftRequest names the stack a drift check compares with live.
type DriftRequest struct {
	Project     string
	Workspace   string
	Settings    runspec.RuntimeSettings
	Parallelism int
	// Project is the project's own drift config (project.yaml), applied after the
	// workspace's.
	ProjectDrift drift.Config
}

// CheckDrift runs a DriftCheck now, waits for it and returns the report it
// stored. It never blocks, nor is blocked by, an apply of the stack.
func (c *Client) CheckDrift(ctx context.Context, req DriftRequest) (*drift.Report, error) {
	ws, err := c.Workspace(ctx, req.Workspace)
	if err != nil {
		return nil, err
	}
	in := runspec.DriftInput{
		Project: req.Project, Workspace: req.Workspace, Settings: req.Settings, Parallelism: req.Parallelism,
		Drift: ws.Drift.Merge(req.ProjectDrift),
	}
	if latest, err := c.backend.LatestRelease(ctx, req.Project, req.Workspace); err == nil {
		in.Stack = latest.Stack
	} else if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("nothing to check: %s/%s has no releases", req.Project, req.Workspace)
	}
	id := workflows.DriftWorkflowID(req.Project, req.Workspace, time.Now())
	run, err := c.startWorkflow(ctx, workflows.DriftWorkflow, id, Request{Project: req.Project, Workspace: req.Workspace, Stack: in.Stack}, in)
	if err != nil {
		return nil, err
	}
	var res runspec.DriftResult
	if err := run.wait(ctx, &res); err != nil {
		return nil, fmt.Errorf("drift check of %s/%s: %w", req.Project, req.Workspace, err)
	}
	return c.backend.DriftReport(ctx, req.Project, req.Workspace, res.RunID)
}

// DriftReport returns the stored report of check runID, or the latest with "".
func (c *Client) DriftReport(ctx context.Context, project, workspace, runID string) (*drift.Report, error) {
	r, err := c.backend.DriftReport(ctx, project, workspace, runID)
	if errors.Is(err, backend.ErrNotFound) && runID == "" {
		return nil, fmt.Errorf("%s/%s has no drift report yet: run `kumo drift check`", project, workspace)
	}
	return r, err
}
