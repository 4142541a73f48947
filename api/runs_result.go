package api

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// RunResult is GET runs/{id}/result of a preview, apply, destroy, rollback
// or drift check (a generate run's is its Spec).
type RunResult struct {
	ID        string `json:"id"`
	Operation string `json:"operation"`
	Status    string `json:"status"`
	Revision  int    `json:"revision,omitempty"`
	// Digest names the plan (preview, apply, destroy, rollback): what
	// approve takes.
	Digest string `json:"digest,omitempty"`
	// Changes are the plan, per resource, field by field.
	Changes []engine.Change       `json:"changes,omitempty"`
	Counts  *runspec.ChangeCounts `json:"counts,omitempty"`
	// Approval is the run's approval state, once it waits for one.
	Approval *runspec.ApprovalState `json:"approval,omitempty"`
	// Resources are each resource's outcome (apply, destroy, rollback).
	Resources    []client.ResourceOutcome `json:"resources,omitempty"`
	Error        string                   `json:"error,omitempty"`
	Compensation *engine.Compensation     `json:"compensation,omitempty"`
	// DriftReport is a drift check's report.
	DriftReport *drift.Report `json:"driftReport,omitempty"`
}

func getRunResult(c *call) error {
	info, err := c.findRun(authz.Show)
	if err != nil {
		return err
	}
	switch info.Operation {
	case "generate":
		return c.generateResult(info)
	case "preview":
		if info.Running() {
			return newProblem(ProblemRunNotEnded, fmt.Sprintf("preview run %s is %s: its changes are its result once it ends", info.RunID, info.Status))
		}
		run, _, err := c.kc.OpenRun(c.ctx, info.Project, info.RunID)
		if err != nil {
			return err
		}
		res, err := run.Wait(c.ctx)
		out := RunResult{ID: info.RunID, Operation: info.Operation, Status: info.Status, Digest: res.Digest, Changes: res.Changes, Error: res.Error}
		if err != nil && out.Error == "" {
			out.Error = err.Error()
		}
		if res.ChangesOmitted > 0 { // too many for the result: the run answers them in pages
			p, err := run.Progress(c.ctx)
			if err != nil {
				return fmt.Errorf("the preview's %d changes: %w", res.ChangesOmitted, err)
			}
			out.Changes = p.Changes
		}
		if out.Changes != nil {
			counts := runspec.CountChanges(out.Changes)
			out.Counts = &counts
		}
		return c.json(http.StatusOK, out)
	case "drift":
		if info.Running() {
			return newProblem(ProblemRunNotEnded, fmt.Sprintf("drift check %s is %s: its report is its result once it ends", info.RunID, info.Status))
		}
		r, err := c.kc.DriftReport(c.ctx, info.Project, info.Workspace, info.RunID)
		if err != nil {
			return err
		}
		return c.json(http.StatusOK, RunResult{ID: info.RunID, Operation: info.Operation, Status: info.Status, Revision: r.Revision, DriftReport: r})
	}
	// apply, destroy, rollback, remediate: the plan and each resource's
	// outcome, so far while it runs.
	d, err := c.kc.ShowRun(c.ctx, info.Project, info.RunID)
	if err != nil {
		return err
	}
	out := RunResult{ID: d.RunID, Operation: d.Operation, Status: d.Status, Revision: d.Revision, Counts: d.Changes,
		Resources: d.Resources, Error: d.Error, Compensation: d.Compensation}
	if d.ProgressError == "" {
		run, _, err := c.kc.OpenRun(c.ctx, info.Project, info.RunID)
		if err != nil {
			return err
		}
		p, err := run.Progress(c.ctx)
		if err != nil {
			return err
		}
		out.Digest, out.Changes, out.Approval = p.Digest, p.Changes, p.Approval
	} else if out.Error == "" {
		out.Error = d.ProgressError
	}
	return c.json(http.StatusOK, out)
}

// generateResult answers a generate run's Spec: YAML, or JSON when Accept
// prefers it.
func (c *call) generateResult(info *client.RunInfo) error {
	if info.Running() {
		return newProblem(ProblemRunNotEnded, fmt.Sprintf("generate run %s is %s: its Spec is its result once it ends", info.RunID, info.Status))
	}
	format, err := specFormat(c.r.Header.Get("Accept"))
	if err != nil {
		return err
	}
	run, _, err := c.kc.OpenRun(c.ctx, info.Project, info.RunID)
	if err != nil {
		return err
	}
	spec, err := run.Spec(c.ctx)
	if err != nil {
		return refused(err)
	}
	spec = &engine.Spec{Resources: engine.MaskResources(spec.Resources)}
	if format == "application/json" {
		return c.json(http.StatusOK, spec)
	}
	data, err := engine.MarshalSpec(spec)
	if err != nil {
		return err
	}
	writeBody(c.w, c.r, http.StatusOK, "application/yaml", data, true)
	return nil
}

// specFormat picks a generate result's type from Accept: YAML unless JSON
// is asked for before it; 406 when neither is acceptable.
func specFormat(accept string) (string, error) {
	if strings.TrimSpace(accept) == "" {
		return "application/yaml", nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case "application/json":
			return "application/json", nil
		case "application/yaml", "application/x-yaml", "text/yaml", "application/*", "text/*", "*/*":
			return "application/yaml", nil
		}
	}
	return "", newProblem(ProblemNotAcceptable, fmt.Sprintf("Accept %q: a generate run's result is application/yaml or application/json", accept))
}
