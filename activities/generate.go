package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
)

// ErrTypeGenerate marks a generation that cannot succeed by retrying: bad files,
// an unknown workspace, a generator that failed.
const ErrTypeGenerate = "GenerateFailed"

// GenerateInput names the stack to generate and the workspace to generate it for.
type GenerateInput struct {
	// StackDir is the absolute stack directory, read by the worker.
	StackDir string `json:"stackDir"`
	// Project is the project name the run was started for (from project.yaml).
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	// GeneratorTimeout bounds each external generator call (default 60 s).
	GeneratorTimeout time.Duration `json:"generatorTimeout,omitempty"`
}

// GenerateResult names the stored Spec.
type GenerateResult struct {
	SpecHash  string `json:"specHash"`
	Stack     string `json:"stack"`
	Resources int    `json:"resources"`
}

// RunLogGenerate is the run-log part Generate writes; parts are read in name order.
const RunLogGenerate = "10-generate"

// Generate reads the stack, runs the built-in and external generators against
// the workspace, and stores the Spec in the backend. What the generators said
// (stderr included) goes to the run log, failed or not.
func (a *Activities) Generate(ctx context.Context, in GenerateInput) (GenerateResult, error) {
	var log bytes.Buffer
	res, err := a.generate(ctx, in, &log)
	if err != nil {
		fmt.Fprintf(&log, "generate failed: %v\n", err)
	}
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	if lerr := a.backend.PutRunLog(ctx, runID, RunLogGenerate, log.Bytes()); lerr != nil && err == nil {
		return GenerateResult{}, fmt.Errorf("write run log: %w", lerr)
	}
	var appErr *temporal.ApplicationError
	if err != nil && !errors.As(err, &appErr) && ctx.Err() == nil {
		err = temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeGenerate, nil)
	}
	return res, err
}

func (a *Activities) generate(ctx context.Context, in GenerateInput, log *bytes.Buffer) (GenerateResult, error) {
	src, err := generate.Load(in.StackDir)
	if err != nil {
		return GenerateResult{}, err
	}
	if src.Project.Name != in.Project {
		return GenerateResult{}, fmt.Errorf("stack %s belongs to project %q, not %q", in.StackDir, src.Project.Name, in.Project)
	}
	ws, err := LoadWorkspace(ctx, a.backend, in.Workspace)
	if err != nil {
		return GenerateResult{}, err
	}
	// External generators may take a while; heartbeats keep a live worker's
	// attempt from being timed out, while a dead worker's is retried quickly.
	stop := heartbeat(ctx, 2*time.Second)
	spec, err := generate.Generate(ctx, generate.Input{
		Source: src, Workspace: ws, Runner: generate.ExecRunner{Timeout: in.GeneratorTimeout}, Log: log,
	})
	stop()
	if err != nil {
		return GenerateResult{}, err
	}
	hash, err := a.backend.PutSpec(ctx, spec)
	if err != nil {
		return GenerateResult{}, temporal.NewApplicationError(fmt.Sprintf("store spec: %v", err), "BackendError")
	}
	return GenerateResult{SpecHash: hash, Stack: src.Stack.Name, Resources: len(spec.Resources)}, nil
}

// LoadWorkspace returns a stored workspace; the default workspace exists even
// when it was never stored (empty).
func LoadWorkspace(ctx context.Context, b backend.Backend, name string) (*engine.Workspace, error) {
	ws, err := b.GetWorkspace(ctx, name)
	if errors.Is(err, backend.ErrNotFound) {
		if name == engine.DefaultWorkspace {
			return &engine.Workspace{Name: name}, nil
		}
		return nil, fmt.Errorf("workspace %q does not exist: create it with `kumo workspace create %s --file FILE`", name, name)
	}
	return ws, err
}
