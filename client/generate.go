package client

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/runspec"
)

// source is what a run generates from: req's stack, checked against req.Project.
// The stack's files are read here once, so that a bad project.yaml, stack.yaml or
// app.yaml is reported before any run starts (the worker reads them again to
// generate, possibly on another machine). It sets req.Stack from stack.yaml.
func (c *Client) source(ctx context.Context, req *Request) (*runspec.GenerateInput, error) {
	dir, err := filepath.Abs(req.StackDir)
	if err != nil {
		return nil, err
	}
	src, err := generate.Load(dir)
	if err != nil {
		return nil, err
	}
	if src.Project.Name != req.Project {
		return nil, fmt.Errorf("stack %s belongs to project %q, not %q", dir, src.Project.Name, req.Project)
	}
	req.Stack = src.Stack.Name
	if err := c.trustOnFirstUse(ctx, src, req.Workspace); err != nil {
		return nil, err
	}
	return &runspec.GenerateInput{StackDir: dir, Project: req.Project, Workspace: req.Workspace, GeneratorTimeout: req.GeneratorTimeout}, nil
}

// Generate starts a Generate run of req's stack for req's workspace; Run.Spec
// waits for it and returns the Spec.
func (c *Client) Generate(ctx context.Context, req Request) (*Run, error) {
	src, err := c.source(ctx, &req)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%s/generate/%d", runspec.MutatingWorkflowID(req.Project, req.Workspace), time.Now().UnixNano())
	return c.startWorkflow(ctx, runspec.GenerateWorkflow, id, req, *src)
}

// Spec waits for a Generate run and returns the Spec it stored.
func (r *Run) Spec(ctx context.Context) (*engine.Spec, error) {
	var res runspec.GenerateResult
	if err := r.wait(ctx, &res); err != nil {
		return nil, err
	}
	return r.c.backend.GetSpec(ctx, res.SpecHash)
}
