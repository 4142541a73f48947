package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
)

// GenerateInput names the stack to generate and the workspace to generate it for.
type GenerateInput struct {
	// StackDir is the absolute stack directory, read by the worker.
	StackDir string `json:"stackDir"`
	// Git, instead of StackDir, names a git source and the commit to read:
	// the worker reads the source (URL, ref, path, credentials' files) from
	// its backend by name, fetches that commit and generates from it.
	Git *engine.GitOrigin `json:"git,omitempty"`
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
