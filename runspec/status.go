package runspec

import "github.com/kumoproj/kumo/engine/drift"

// Status is a run's KumoStatus search attribute: where it is, in the words of
// `kumo run list`, kept current by the workflow.
type Status string

const (
	// StatusRunning: generating, planning or previewing (set when the run starts).
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting-approval"
	StatusApplying         Status = "applying"
	StatusDestroying       Status = "destroying"
	StatusCompensating     Status = "compensating"
	StatusSucceeded        Status = "succeeded"
	StatusFailed           Status = "failed"
	StatusCancelled        Status = "cancelled"
)

// StatusDriftStuck is the KumoStatus of a check that no longer remediates:
// remediations in a row left the stack drifted (drift.Stuck).
const StatusDriftStuck Status = drift.Stuck

// Final reports whether a run with this status has ended.
func (s Status) Final() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}
