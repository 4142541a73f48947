package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/runtime/registry"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// StatusDepth is how many levels of owned objects a status tree shows
// (Deployment → ReplicaSet → Pod is two).
const StatusDepth = 3

// statusReadTimeout ends a status read whose reader went away (a worker that
// stopped, a CLI interrupted), so it does not wait in its queue for ever.
const statusReadTimeout = 15 * time.Minute

// Statuses reads the live status of stacks. Keep one for a --watch: its
// runtimes (clients, discovery) are reused across reads.
type Statuses struct {
	c *Client
	m *release.Manager
}

// Statuses returns a reader of live stack status. Reading a workspace without
// a task queue needs no Temporal.
func (c *Client) Statuses() *Statuses {
	return &Statuses{c: c, m: release.New(c.backend, registry.New(), nil)}
}

// Read reads every resource of the latest release of project+workspace live,
// with its health and the stack's (the worst); with tree, also the objects
// each owns, StatusDepth levels down. When settings name a task queue, the
// queue's workers read it (a StackStatus workflow): only they reach the
// cluster. Without one, this process reads it.
func (s *Statuses) Read(ctx context.Context, project, workspace string, settings runspec.RuntimeSettings, tree bool) (runspec.StackStatus, error) {
	depth := 0
	if tree {
		depth = StatusDepth
	}
	if settings.TaskQueue != "" {
		return s.c.readStatus(ctx, runspec.StatusInput{Project: project, Workspace: workspace, Settings: settings, Depth: depth})
	}
	st, err := s.m.Status(ctx, project, workspace, settings, depth)
	if errors.Is(err, backend.ErrNotFound) {
		return st, fmt.Errorf("no status: %s/%s has no releases", project, workspace)
	}
	return st, err
}

// readStatus runs a StackStatus workflow and waits for its result. It fails
// at once when no worker serves the workspace's queue, rather than wait for one.
func (c *Client) readStatus(ctx context.Context, in runspec.StatusInput) (runspec.StackStatus, error) {
	var st runspec.StackStatus
	queue := in.Settings.TaskQueue
	tc, err := c.connect(ctx)
	if err != nil {
		return st, err
	}
	if !c.served(ctx, queue) {
		return st, fmt.Errorf("status of %s/%s: %s", in.Project, in.Workspace, WaitingForWorker(queue))
	}
	wr, err := tc.ExecuteWorkflow(ctx, statusStartOptions(in), runspec.StatusWorkflow, in)
	if err != nil {
		return st, fmt.Errorf("status of %s/%s: %w", in.Project, in.Workspace, err)
	}
	err = wr.Get(ctx, &st)
	if ctx.Err() != nil {
		// Best effort: the read is no longer wanted.
		_ = tc.CancelWorkflow(context.WithoutCancel(ctx), wr.GetID(), wr.GetRunID())
		return st, ctx.Err()
	}
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return st, nil
	case errors.As(err, &app) && (app.Type() == activities.ErrTypeNoRelease || app.Type() == activities.ErrTypeStatusTooLarge):
		return st, errors.New(app.Message()) // it names the stack, as a local read's does
	case errors.As(err, &app):
		return st, fmt.Errorf("status of %s/%s, read on queue %s: %s", in.Project, in.Workspace, queue, app.Message())
	default:
		return st, fmt.Errorf("status of %s/%s, read on queue %s: %w", in.Project, in.Workspace, queue, err)
	}
}

// statusStartOptions starts a status read on the default queue (only its
// activity goes to the workspace's). It files no search attributes: a read
// is not a run, and `kumo run list` lists only workflows with KumoProject.
func statusStartOptions(in runspec.StatusInput) sdkclient.StartWorkflowOptions {
	return sdkclient.StartWorkflowOptions{
		ID:                       runspec.StatusWorkflowID(in.Project, in.Workspace, time.Now()),
		TaskQueue:                runspec.TaskQueue,
		WorkflowExecutionTimeout: statusReadTimeout,
		StaticSummary:            "status " + in.Project + "/" + in.Workspace,
	}
}
