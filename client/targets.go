package client

import (
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/engine/resid"
	"github.com/kumoproj/kumo/runspec"
)

// checkTargets refuses, before a run starts, targets the run cannot take:
// an address that does not parse (named), targets on a run that is not a
// preview, apply or destroy, and --target-dependents without a target. The
// run checks the addresses again (the plan step), as a raw SDK client skips
// this.
func checkTargets(workflowType string, req Request) error {
	if len(req.Targets) == 0 {
		if req.TargetDependents {
			return errors.New("--target-dependents: give at least one --target")
		}
		return nil
	}
	switch workflowType {
	case runspec.PreviewWorkflow, runspec.ApplyWorkflow, runspec.DestroyWorkflow:
	default:
		return fmt.Errorf("--target: a %s run cannot be narrowed; only preview, apply and destroy can", workflowType)
	}
	for _, t := range req.Targets {
		if _, err := resid.ParseTarget(t); err != nil {
			return err
		}
	}
	return nil
}
