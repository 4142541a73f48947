package engine

import (
	"fmt"
	"regexp"
	"time"
)

// Release is the record of one apply, destroy or rollback of a project in a workspace.
// Revisions count 1, 2, ... per project and workspace without gaps.
type Release struct {
	Project   string    `json:"project"`
	Workspace string    `json:"workspace"`
	Stack     string    `json:"stack,omitempty"`
	Revision  int       `json:"revision"`
	Operation Operation `json:"operation"`
	Phase     Phase     `json:"phase"`
	// SpecHash identifies Spec by content (see HashSpec).
	SpecHash string `json:"specHash"`
	Spec     *Spec  `json:"spec,omitempty"`
	State    *State `json:"state,omitempty"`
	// Chart is the Helm chart the spec was rendered from (kumo apply --chart).
	Chart *ChartSource `json:"chart,omitempty"`
	// Git is the commit of a git source the spec was generated from.
	Git *GitOrigin `json:"git,omitempty"`
	// RollbackOf is the revision whose spec a rollback applied again.
	RollbackOf int `json:"rollbackOf,omitempty"`
	// Reason says why a run that no one typed made this release (a
	// remediation names its drift check).
	Reason string `json:"reason,omitempty"`
	// Surgery is what a forget or move release changed in the record
	// (kumo release forget, kumo release mv).
	Surgery *Surgery `json:"surgery,omitempty"`
	// Label is the name, message and source commit its run gave it.
	Label ReleaseLabel `json:"label,omitzero"`
	// Target, on a partial release, is what its run was narrowed to
	// (--target): only those resources (and what they need) were changed;
	// every other resource's record is the prior release's, unchanged.
	Target *Targeting `json:"target,omitempty"`
	// Retained are the resources the run would have deleted but left live,
	// their delete policy being retain: kumo no longer manages them.
	Retained []string `json:"retained,omitempty"`
	// Error is why a failed release failed.
	Error string `json:"error,omitempty"`
	// Compensation is what was undone after a failed apply, if anything was.
	Compensation *Compensation `json:"compensation,omitempty"`
	// Hooks are the hooks its run ran (Spec.Hooks): which, where, and how
	// each ended. Hooks are recorded here only, never in State.
	Hooks []HookRun `json:"hooks,omitempty"`
	// People are who started the run, approved or rejected its plan, or
	// cancelled it.
	People
	CreateTime time.Time `json:"createTime"`
	ModifyTime time.Time `json:"modifyTime"`
	// WorkflowID and RunID name the Temporal run that owns the release.
	WorkflowID string `json:"workflowID,omitempty"`
	RunID      string `json:"runID,omitempty"`
	// Version is set by the backend when it reads or writes the release: an opaque
	// token of the stored copy (an ETag, a content hash). UpdateRelease writes only
	// over that same copy, so two writers never silently overwrite each other. It is
	// not part of the record itself.
	Version string `json:"-"`
}

// Targeting is a partial run's --target addresses (as given) and whether
// their dependents were kept too (--target-dependents).
type Targeting struct {
	Targets    []string `json:"targets"`
	Dependents bool     `json:"dependents,omitempty"`
}

// ChartSource names the Helm chart a release's spec was rendered from.
type ChartSource struct {
	// Chart and Version are the chart's name and version (Chart.yaml);
	// AppVersion is its appVersion.
	Chart      string `json:"chart"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion,omitempty"`
	// Ref is where it was read from (a path, or an oci:// reference).
	Ref string `json:"ref,omitempty"`
	// Release is the Helm release name it was rendered with (.Release.Name).
	Release string `json:"release,omitempty"`
	// ValuesDigest identifies the values given (--values, --set), not the
	// chart's own defaults: sha256 of their JSON with sorted keys.
	ValuesDigest string `json:"valuesDigest"`
}

// GitOrigin names the commit of a git source a release's spec was generated
// from (kumo apply --source, a sync schedule, the git webhook).
type GitOrigin struct {
	Source string `json:"source"`
	URL    string `json:"url"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// Path is the stack's directory in the repository ("" its root).
	Path string `json:"path,omitempty"`
}

// Compensation records the undoing of a failed apply: the resources put back as
// they were before it, and the undo steps that failed (after their retries).
type Compensation struct {
	Resources []string `json:"resources,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

// Operation is what a release did.
type Operation string

const (
	OperationApply    Operation = "apply"
	OperationDestroy  Operation = "destroy"
	OperationRollback Operation = "rollback"
	// OperationRefresh records what is live as a revision of the latest
	// release's spec, changing nothing live (Terraform's -refresh-only).
	OperationRefresh Operation = "refresh"
	// OperationRemediate re-applies the spec of the release a drift check
	// found drifted.
	OperationRemediate Operation = "remediate"
)

// Phase is where a release is in its life. Only succeeded and failed are final.
type Phase string

const (
	PhaseGenerating Phase = "generating"
	PhasePreviewing Phase = "previewing"
	// PhaseAwaitingApproval: previewed, waiting for someone to approve or
	// reject the plan (`kumo approve`, `kumo reject`).
	PhaseAwaitingApproval Phase = "awaiting-approval"
	PhaseApplying         Phase = "applying"
	PhaseDestroying       Phase = "destroying"
	PhaseSucceeded        Phase = "succeeded"
	PhaseFailed           Phase = "failed"
)

// Final reports whether no run will change a release in this phase any more.
func (p Phase) Final() bool { return p == PhaseSucceeded || p == PhaseFailed }

// ReleaseLabel is what a run says of the release it makes: a name a team
// gives a revision (apply --version alpha1, unique among the stack's
// releases: rollback --version alpha1 restores it), a message, and the git
// commit of the stack it was generated from.
type ReleaseLabel struct {
	Version      string `json:"version,omitempty"`
	Message      string `json:"message,omitempty"`
	SourceCommit string `json:"sourceCommit,omitempty"`
}

// maxMessage bounds a release's message: a line or a paragraph, not a file.
const maxMessage = 4096

// Validate checks a label as a run gives it; errors name the flag.
func (l ReleaseLabel) Validate() error {
	if v := l.Version; v != "" {
		if len(v) > 63 || !versionName.MatchString(v) {
			return fmt.Errorf("--version %q: want up to 63 letters, digits, '.', '_' or '-', starting with a letter or digit (alpha1, v1.2.0)", v)
		}
	}
	if len(l.Message) > maxMessage {
		return fmt.Errorf("--message: %d bytes, at most %d", len(l.Message), maxMessage)
	}
	if c := l.SourceCommit; c != "" && !commitID.MatchString(c) {
		return fmt.Errorf("source commit %q: want a git commit ID (40 or 64 hex digits)", c)
	}
	return nil
}

var (
	versionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	commitID    = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
)
