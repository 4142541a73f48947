package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/runspec"
)

// RunLogGenerate is the run-log part Generate writes; parts are read in name order.
const RunLogGenerate = "10-generate"

// Generate reads the stack, runs the built-in and external generators against
// the workspace, and stores the Spec in the backend under its hash (storing the
// same spec twice gives the same hash). What the generators said (stderr
// included) goes to runID's log, failed or not.
//
// A failure a retry cannot fix is ErrGenerate; failing to store the spec is
// ErrBackend. When ctx ends, its error is returned as it is.
func (m *Manager) Generate(ctx context.Context, runID string, in runspec.GenerateInput) (runspec.GenerateResult, error) {
	var log bytes.Buffer
	res, err := m.generate(ctx, in, &log)
	if err != nil {
		fmt.Fprintf(&log, "generate failed: %v\n", err)
	}
	if lerr := m.backend.PutRunLog(ctx, runID, RunLogGenerate, log.Bytes()); lerr != nil && err == nil {
		return runspec.GenerateResult{}, fmt.Errorf("write run log: %w", lerr)
	}
	var kind *Error
	if err != nil && !errors.As(err, &kind) && ctx.Err() == nil {
		err = kindErr(ErrGenerate, err)
	}
	return res, err
}

func (m *Manager) generate(ctx context.Context, in runspec.GenerateInput, log *bytes.Buffer) (runspec.GenerateResult, error) {
	var src *generate.Source
	var err error
	if in.Git != nil {
		var done func()
		src, done, err = m.loadGitStack(ctx, in, log)
		defer done() // the checkout is held until the spec is generated from it
	} else {
		src, err = m.generation.Load(in.StackDir)
	}
	if err != nil {
		return runspec.GenerateResult{}, err
	}
	if src.Project.Name != in.Project {
		return runspec.GenerateResult{}, fmt.Errorf("stack %s belongs to project %q, not %q", in.StackDir, src.Project.Name, in.Project)
	}
	ws, err := LoadWorkspace(ctx, m.backend, in.Workspace)
	if err != nil {
		return runspec.GenerateResult{}, err
	}
	spec, err := generate.Generate(ctx, generate.Input{
		Source: src, Workspace: ws, Log: log,
		Runner: generate.ExecRunner{Timeout: in.GeneratorTimeout, Trust: generate.Trust{
			Workspace: ws.Name, Config: ws.GeneratorTrust, Dirs: m.generation.TrustedDirs,
		}},
	})
	if err != nil {
		return runspec.GenerateResult{}, err
	}
	// A generator's output is input like a spec file: it may not carry a
	// sealed value copied from a release file.
	if errs := spec.CheckNoSealed(); len(errs) > 0 {
		return runspec.GenerateResult{}, kindErr(ErrInvalid, errors.Join(errs...))
	}
	hash, err := m.backend.PutSpec(ctx, spec)
	if err != nil {
		return runspec.GenerateResult{}, kindf(ErrBackend, "store spec: %v", err)
	}
	return runspec.GenerateResult{SpecHash: hash, Stack: src.Stack.Name, Resources: len(spec.Resources)}, nil
}

// SetGeneration sets what the worker's operator decides about generation:
// the roots stack directories must lie under and the directories whose
// generators every workspace trusts. Its zero value reads no stack directory
// and trusts no directory.
func (m *Manager) SetGeneration(p generate.Policy) { m.generation = p }

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
