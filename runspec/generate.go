package runspec

import "time"

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
