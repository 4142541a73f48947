package client

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/workflows"
)

// Stack names the project and stack of a stack directory, reading its files, so
// that a bad project.yaml, stack.yaml or app.yaml is reported before any run.
func Stack(dir string) (project, stack string, err error) {
	src, err := generate.Load(dir)
	if err != nil {
		return "", "", err
	}
	return src.Project.Name, src.Stack.Name, nil
}

// source is what a run generates from: req's stack, checked against req.Project.
func (c *Client) source(req Request) (*activities.GenerateInput, error) {
	dir, err := filepath.Abs(req.StackDir)
	if err != nil {
		return nil, err
	}
	project, _, err := Stack(dir)
	if err != nil {
		return nil, err
	}
	if project != req.Project {
		return nil, fmt.Errorf("stack %s belongs to project %q, not %q", dir, project, req.Project)
	}
	return &activities.GenerateInput{StackDir: dir, Project: project, Workspace: req.Workspace, GeneratorTimeout: req.GeneratorTimeout}, nil
}

// Generate starts a Generate run of req's stack for req's workspace; Run.Spec
// waits for it and returns the Spec.
func (c *Client) Generate(ctx context.Context, req Request) (*Run, error) {
	src, err := c.source(req)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%s/generate/%d", workflows.MutatingWorkflowID(req.Project, req.Workspace), time.Now().UnixNano())
	return c.startWorkflow(ctx, workflows.GenerateWorkflow, id, req, *src)
}

// Spec waits for a Generate run and returns the Spec it stored.
func (r *Run) Spec(ctx context.Context) (*engine.Spec, error) {
	var res activities.GenerateResult
	if err := r.wait(ctx, &res); err != nil {
		return nil, err
	}
	return r.c.backend.GetSpec(ctx, res.SpecHash)
}
