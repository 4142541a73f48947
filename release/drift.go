package release

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// DriftInput names the stack a drift check compares with live, and how.
type DriftInput struct {
	Project   string
	Workspace string
	// RunID and CheckTime name the stored report: a retried check writes the
	// same one.
	RunID     string
	CheckTime time.Time
	Settings  runspec.RuntimeSettings
	// Parallelism bounds the reads and dry-runs in flight (default 10).
	Parallelism int
	// Config is the ignore rules (workspace's, then project's), how many
	// reports to keep, and the remediation policy.
	Config drift.Config
	// Mode is drift.ModeWarn ("") or drift.ModeRemediate: then the report
	// says whether to remediate (drift.Report.Decide).
	Mode string
}

// CheckDrift compares every resource of the latest succeeded release of a
// stack with live, applies the ignore rules, carries first-seen times over from
// the previous report, stores the report and returns it. Kubernetes resources
// are compared through the runtime's DriftReader (the recorded desired object,
// its references resolved from the recorded state, dry-run applied as kumo);
// Terraform resources by refreshing their recorded state (Runtime.Read) and
// comparing its attributes with the recorded ones. A stack with no succeeded
// release is ErrNoRelease. It also returns the changes of drift state since the
// previous report (drift.Report.Events), for the webhook.
func (m *Manager) CheckDrift(ctx context.Context, in DriftInput) (*drift.Report, []drift.Event, error) {
	rel, err := m.latestSucceeded(ctx, in.Project, in.Workspace)
	if err != nil {
		return nil, nil, err
	}
	if err := in.Config.Validate("drift config"); err != nil {
		return nil, nil, kindErr(ErrInvalid, err)
	}
	var recorded []engine.Resource
	if rel.State != nil {
		recorded = rel.State.Resources
	}
	desired, err := m.recordedDesired(ctx, rel, recorded)
	if err != nil {
		return nil, nil, err
	}
	results := make([]drift.Result, len(recorded))
	byType := map[engine.Type][]int{}
	for i, r := range recorded {
		byType[r.Type] = append(byType[r.Type], i)
	}
	for typ, idx := range byType {
		rt, err := m.runtime(ctx, in.Workspace, typ, in.Settings)
		if err != nil {
			for _, i := range idx {
				results[i] = drift.Result{ID: recorded[i].ID, Type: string(typ), Status: drift.Error, Error: err.Error()}
			}
			continue
		}
		if dr, ok := rt.(runtime.DriftReader); ok {
			batch := make([]*engine.Resource, len(idx))
			for j, i := range idx {
				batch[j] = desired[i]
			}
			for j, res := range dr.Drift(ctx, batch, runtime.DriftOptions{Parallelism: in.Parallelism}) {
				results[idx[j]] = res
			}
			continue
		}
		m.driftByRead(ctx, rt, recorded, idx, in.Parallelism, results)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	report := &drift.Report{Project: in.Project, Workspace: in.Workspace, Stack: rel.Stack, CheckTime: in.CheckTime, RunID: in.RunID,
		Revision: rel.Revision, SpecHash: rel.SpecHash, Mode: in.Mode}
	for i, res := range results {
		in.Config.Apply(&res)
		maskDrift(&res, &recorded[i])
		report.Add(res)
	}
	report.Sort()
	prev, err := m.backend.DriftReport(ctx, in.Project, in.Workspace, "")
	switch {
	case errors.Is(err, backend.ErrNotFound):
		prev = nil
	case err != nil:
		return nil, nil, kindErr(ErrBackend, err)
	}
	if prev != nil && prev.RunID == in.RunID {
		// A retry of this check: carry over from the one before it instead.
		prev = m.reportBefore(ctx, in)
	}
	report.CarryOver(prev)
	if in.Mode == drift.ModeRemediate {
		report.Decide(prev, in.Config.Remediation)
	}
	if err := m.backend.PutDriftReport(ctx, report, in.Config.KeepOrDefault()); err != nil {
		return nil, nil, kindErr(ErrBackend, err)
	}
	return report, report.Events(prev), nil
}

// RecordRemediation records in the report of the check how its remediation
// ended (see drift.Remediation.Finish) and returns the event to announce, if
// any. Recording an outcome again changes nothing.
func (m *Manager) RecordRemediation(ctx context.Context, in runspec.RemediationRecord) (*drift.Event, error) {
	r, err := m.backend.DriftReport(ctx, in.Project, in.Workspace, in.Check)
	if err != nil {
		return nil, kindErr(ErrBackend, err)
	}
	if r.Remediation == nil || r.Remediation.State != drift.Remediating {
		return nil, kindf(ErrInvalid, "drift check %s of %s/%s started no remediation", in.Check, in.Project, in.Workspace)
	}
	if r.Remediation.Outcome == "" {
		r.Remediation.Finish(in.WorkflowID, in.Revision, in.Outcome, in.Error)
		if err := m.backend.PutDriftReport(ctx, r, in.Keep); err != nil {
			return nil, kindErr(ErrBackend, err)
		}
	}
	if e, ok := r.RemediationEvent(); ok {
		return &e, nil
	}
	return nil, nil
}

// reportBefore returns the newest stored report older than this check's.
func (m *Manager) reportBefore(ctx context.Context, in DriftInput) *drift.Report {
	all, err := m.backend.DriftReports(ctx, in.Project, in.Workspace)
	if err != nil {
		return nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].RunID != in.RunID && all[i].CheckTime.Before(in.CheckTime) {
			return all[i]
		}
	}
	return nil
}

// latestSucceeded returns the newest release whose run succeeded.
func (m *Manager) latestSucceeded(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := m.Latest(ctx, project, workspace)
	for err == nil && r.Phase != engine.PhaseSucceeded {
		if r.Revision <= 1 {
			return nil, kindf(ErrNoRelease, "%s/%s has no succeeded release to check", project, workspace)
		}
		r, err = m.priorRelease(ctx, project, workspace, r.Revision-1)
		if errors.Is(err, backend.ErrNotFound) {
			// Under the oldest revision the history limit kept: it keeps
			// the newest succeeded one, so there is none.
			return nil, kindf(ErrNoRelease, "%s/%s has no succeeded release to check: %v", project, workspace, err)
		}
	}
	return r, err
}

// recordedDesired returns, per recorded resource, what a drift check compares
// live with. For Kubernetes that is the object the release applied: its spec
// resource with references resolved from the recorded state (a resource the
// spec does not hold is compared as recorded). For Terraform it is the recorded
// resource, which carries the terraform state a refresh starts from.
func (m *Manager) recordedDesired(ctx context.Context, rel *engine.Release, recorded []engine.Resource) ([]*engine.Resource, error) {
	var spec *specIndex
	if rel.SpecHash != "" {
		var err error
		if spec, err = m.spec(ctx, rel.SpecHash); err != nil {
			return nil, err
		}
	}
	state := func(_ context.Context, id string) (map[string]any, error) {
		if r := findResource(recorded, id); r != nil {
			return r.Attributes, nil
		}
		return nil, nil
	}
	out := make([]*engine.Resource, len(recorded))
	for i := range recorded {
		out[i] = &recorded[i]
		if recorded[i].Type == engine.Terraform || spec == nil || spec.resource(recorded[i].ID) == nil {
			continue
		}
		refs, err := spec.refsOf(recorded[i].ID)
		if err != nil {
			return nil, err
		}
		d, _, err := withRefs(ctx, spec.resource(recorded[i].ID), refs, state, false)
		if err != nil {
			return nil, err
		}
		out[i] = withRecordedSecrets(d, &recorded[i])
	}
	return out, nil
}

// driftByRead checks resources idx one Read each (bounded): a refresh of the
// recorded resource compared attribute by attribute with what was recorded.
func (m *Manager) driftByRead(ctx context.Context, rt runtime.Runtime, recorded []engine.Resource, idx []int, parallel int, results []drift.Result) {
	if parallel <= 0 {
		parallel = 10
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, i := range idx {
		g.Go(func() error {
			rec := &recorded[i]
			res := drift.Result{ID: rec.ID, Type: string(rec.Type)}
			live, err := rt.Read(gctx, rec)
			switch {
			case errors.Is(err, runtime.ErrNotFound) || err == nil && live == nil:
				res.Status = drift.Missing
			case err != nil:
				res.Status, res.Error = drift.Error, err.Error()
			default:
				res.Fields = drift.Values(rec.Attributes, live.Attributes)
				res.Status = drift.InSync
				if len(res.Fields) > 0 {
					res.Status = drift.Drifted
				}
			}
			results[i] = res
			return nil
		})
	}
	_ = g.Wait()
}
