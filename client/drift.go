package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
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
	// Mode is drift.ModeWarn (default) or drift.ModeRemediate: re-apply the
	// checked release when drift is found (within the remediation policy).
	Mode string
}

// CheckDrift runs a DriftCheck now, waits for it (and for the remediation it
// starts, in remediate mode) and returns the report it stored. It never
// blocks, nor is blocked by, an apply of the stack.
func (c *Client) CheckDrift(ctx context.Context, req DriftRequest) (*drift.Report, error) {
	run, err := c.StartDriftCheck(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.WaitDriftCheck(ctx, run, req.Project, req.Workspace)
}

// StartDriftCheck starts a DriftCheck run now and returns without waiting
// for it (WaitDriftCheck does).
func (c *Client) StartDriftCheck(ctx context.Context, req DriftRequest) (*Run, error) {
	in, err := c.driftInput(ctx, req)
	if err != nil {
		return nil, err
	}
	id := runspec.DriftWorkflowID(req.Project, req.Workspace, time.Now())
	return c.startWorkflow(ctx, runspec.DriftWorkflow, id, Request{Project: req.Project, Workspace: req.Workspace, Stack: in.Stack}, in)
}

// driftInput is the input of a check of req's stack: the workspace's drift
// config then the project's, and the stack of its latest release.
func (c *Client) driftInput(ctx context.Context, req DriftRequest) (runspec.DriftInput, error) {
	if err := drift.ValidMode(req.Mode); err != nil {
		return runspec.DriftInput{}, fmt.Errorf("--mode: %w", err)
	}
	ws, err := c.Workspace(ctx, req.Workspace)
	if err != nil {
		return runspec.DriftInput{}, err
	}
	in := runspec.DriftInput{
		Project: req.Project, Workspace: req.Workspace, Settings: req.Settings, Parallelism: req.Parallelism,
		Drift: ws.Drift.Merge(req.ProjectDrift), Mode: req.Mode,
	}
	// The URL may hold a token: it travels sealed for the worker, so that no
	// history holds it in clear, not even decoded with the codec key.
	if u := in.Drift.Webhook.URL; u != "" {
		sealed, err := c.backend.SealText(req.Project, req.Workspace, runspec.DriftWebhookURL, u)
		if err != nil {
			return in, fmt.Errorf("seal the drift webhook URL: %w", err)
		}
		if sealed != "" {
			in.Drift.Webhook.URL, in.Drift.Webhook.Sealed = "", sealed
		}
	}
	latest, err := c.backend.LatestRelease(ctx, req.Project, req.Workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return in, fmt.Errorf("nothing to check: %s/%s has no releases", req.Project, req.Workspace)
	}
	if err != nil {
		return in, err
	}
	in.Stack = latest.Stack
	return in, nil
}

// DriftReport returns the stored report of check runID, or the latest with "".
func (c *Client) DriftReport(ctx context.Context, project, workspace, runID string) (*drift.Report, error) {
	r, err := c.backend.DriftReport(ctx, project, workspace, runID)
	if errors.Is(err, backend.ErrNotFound) && runID == "" {
		return nil, notFound("%s/%s has no drift report yet: run `kumo drift check`", project, workspace)
	}
	return r, err
}
