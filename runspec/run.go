package runspec

import (
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// RunInput starts a Preview, Apply or Destroy.
type RunInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack,omitempty"`
	// SpecHash names the desired spec in the backend (unused by Destroy).
	SpecHash string `json:"specHash,omitempty"`
	// Source, when SpecHash is empty, is the stack a Preview or Apply generates
	// its spec from first.
	Source *GenerateInput `json:"source,omitempty"`
	// RollbackOf is the revision a Rollback restores (SpecHash is its spec).
	RollbackOf int `json:"rollbackOf,omitempty"`
	// Reason is recorded in the release: why a run no one typed was started.
	Reason string `json:"reason,omitempty"`
	// Label names the release the run makes (engine.ReleaseLabel).
	Label engine.ReleaseLabel `json:"label,omitzero"`
	// Chart is recorded in the release: the Helm chart SpecHash was rendered
	// from (kumo apply --chart), if it was.
	Chart *engine.ChartSource `json:"chart,omitempty"`
	// Surgery is what a Forget or Move run changes in the latest release's
	// record.
	Surgery *engine.Surgery `json:"surgery,omitempty"`
	// Git is recorded in the release: the git source commit Source
	// generates from (Source.Git is the same), if it is one.
	Git *engine.GitOrigin `json:"git,omitempty"`
	// Parallelism bounds how many nodes run at once (default 10).
	Parallelism int `json:"parallelism,omitempty"`
	// AutoApprove skips waiting for an Approval after preview.
	AutoApprove bool `json:"autoApprove,omitempty"`
	// ApprovalTimeout is how long the run waits for approval (default 24 h).
	ApprovalTimeout time.Duration `json:"approvalTimeout,omitempty"`
	// RollbackOnFailure undoes what a failed apply changed, in reverse order.
	RollbackOnFailure bool            `json:"rollbackOnFailure,omitempty"`
	Settings          RuntimeSettings `json:"settings"`
	// Wait is when an applied node is done: engine.WaitHealthy (default) or
	// engine.WaitApplied; a resource's extensions may say otherwise.
	Wait string `json:"wait,omitempty"`
	// Timeout bounds each resource's wait for health (default 5m).
	Timeout time.Duration `json:"timeout,omitempty"`
	// StartedBy is the name the client says started the run (user@host).
	// The run records the subject of SubjectHeader instead; this name is
	// recorded, marked unverified, only when the start carried none.
	StartedBy string `json:"startedBy,omitempty"`
	// Targets narrow a Preview, Apply or Destroy to the resources these
	// addresses name (resid.ParseTarget: an ID, kind/name or a glob) and
	// what they depend on; TargetDependents keeps what depends on them too.
	// The release records that it is partial.
	Targets          []string `json:"targets,omitempty"`
	TargetDependents bool     `json:"targetDependents,omitempty"`
	// AllowProtectedDelete lets the run delete resources whose delete policy
	// is protect. Only a verified admin of the project/workspace may
	// (MayDeleteProtected): the run refuses anyone else before planning.
	AllowProtectedDelete bool `json:"allowProtectedDelete,omitempty"`
}

// Targeting is what the run's Targets make the release record (nil: the
// run is not narrowed).
func (in RunInput) Targeting() *engine.Targeting {
	if len(in.Targets) == 0 {
		return nil
	}
	return &engine.Targeting{Targets: in.Targets, Dependents: in.TargetDependents}
}

// Cancel carries the reason a run is being cancelled (CancelSignal). It comes
// before Temporal's cancel request, which carries no reason to the workflow.
type Cancel struct {
	Reason string `json:"reason,omitempty"`
	// By is the name the client says cancels (user@host): recorded, marked
	// unverified, only when the signal carried no SubjectHeader.
	By string `json:"by,omitempty"`
}

// Result is how a run ended.
type Result struct {
	Revision int          `json:"revision,omitempty"`
	Phase    engine.Phase `json:"phase,omitempty"`
	// Status is succeeded, failed or cancelled (a cancel request, or an apply
	// whose preview was not approved). Empty from runs older than it.
	Status Status `json:"status,omitempty"`
	// Changes is the preview, one entry per node, unless there are too many
	// to carry in one result: then it is nil, ChangesOmitted counts them and
	// the run answers them page by page (ProgressPageQuery).
	Changes        []engine.Change `json:"changes"`
	ChangesOmitted int             `json:"changesOmitted,omitempty"`
	// Digest is the preview's engine.PlanDigest.
	Digest string `json:"digest,omitempty"`
	// Policies are the plan policy rules the plan violated.
	Policies     []planpolicy.Violation `json:"policies,omitempty"`
	Error        string                 `json:"error,omitempty"`
	Compensation *engine.Compensation   `json:"compensation,omitempty"`
	// Outcome is what the run did to each resource, so that how it ended is
	// read without asking it; nil from runs older than it, and from runs that
	// ended before they had a release.
	Outcome *Outcome `json:"outcome,omitempty"`
	// People and Target are the progress's, for the same reason.
	People *engine.People    `json:"people,omitempty"`
	Target *engine.Targeting `json:"target,omitempty"`
}
