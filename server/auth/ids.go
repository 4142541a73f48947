package auth

import (
	"strings"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// idKind is the form of a kumo workflow ID (runspec/ids.go).
type idKind int

const (
	notKumo    idKind = iota
	mutating          // kumo/<p>/<w>: apply, destroy, rollback, remediate
	generate          // kumo/<p>/<w>/generate/<n>
	preview           // kumo/<p>/<w>/preview/<n>
	drift             // kumo-drift/<p>/<w>/<n...> (a schedule appends to its action's ID)
	stackStat         // kumo-status/<p>/<w>/<n>
	rolloutRun        // kumo-rollout/<p>/<name>: its workspace is "*" (rollouts.go)
	syncTick          // kumo-sync/<p>/<w>/<n...> (a sync schedule's ticks)
	gcRun             // kumo-gc/<n>: a collection of kumo's own records, on */*
	queueRun          // kumo/<p>/<w>/queue: the stack's run queue
)

// parseWorkflowID finds the project and workspace of a kumo workflow ID.
func parseWorkflowID(id string) (kind idKind, project, workspace string) {
	if n, ok := strings.CutPrefix(id, runspec.GCScheduleID+"/"); ok && n != "" && !strings.Contains(n, "/") {
		return gcRun, "", ""
	}
	seg := strings.Split(id, "/")
	if len(seg) < 3 || !name(seg[1]) || !name(seg[2]) {
		return notKumo, "", ""
	}
	p, w := seg[1], seg[2]
	switch seg[0] {
	case "kumo":
		switch {
		case len(seg) == 3:
			return mutating, p, w
		case len(seg) == 4 && seg[3] == "queue":
			return queueRun, p, w
		case len(seg) == 5 && seg[3] == "generate" && seg[4] != "":
			return generate, p, w
		case len(seg) == 5 && seg[3] == "preview" && seg[4] != "":
			return preview, p, w
		}
	case "kumo-drift":
		if len(seg) >= 4 && seg[3] != "" {
			return drift, p, w
		}
	case "kumo-sync":
		if len(seg) >= 4 && seg[3] != "" {
			return syncTick, p, w
		}
	case "kumo-status":
		if len(seg) == 4 && seg[3] != "" {
			return stackStat, p, w
		}
	case "kumo-rollout":
		if len(seg) == 3 {
			return rolloutRun, p, "*"
		}
	}
	return notKumo, "", ""
}

// parseScheduleID finds the project and workspace of a drift or sync
// schedule's ID (runspec.DriftScheduleID, runspec.SyncScheduleID).
func parseScheduleID(id string) (project, workspace string, ok bool) {
	rest, ok := strings.CutPrefix(id, runspec.DriftSchedulePrefix)
	if !ok {
		rest, ok = strings.CutPrefix(id, runspec.SyncSchedulePrefix)
	}
	if !ok {
		return "", "", false
	}
	p, w, ok := strings.Cut(rest, "/")
	if !ok || !name(p) || !name(w) {
		return "", "", false
	}
	return p, w, true
}

// name is a project or workspace name as IDs hold it: not empty, no pattern.
func name(s string) bool { return s != "" && !strings.ContainsAny(s, "*/") }

// startRule is what starting one of kumo's workflow types takes: the ID form
// it must have and the action it is.
type startRule struct {
	kind   idKind
	action authz.Action
}

var workflowTypes = map[string]startRule{
	runspec.ApplyWorkflow:     {mutating, authz.Apply},
	runspec.DestroyWorkflow:   {mutating, authz.Destroy},
	runspec.RollbackWorkflow:  {mutating, authz.Rollback},
	runspec.RefreshWorkflow:   {mutating, authz.Refresh},
	runspec.ForgetWorkflow:    {mutating, authz.Forget},
	runspec.MoveWorkflow:      {mutating, authz.Move},
	runspec.RemediateWorkflow: {mutating, authz.Apply},
	runspec.TestWorkflow:      {mutating, authz.Test},
	runspec.GenerateWorkflow:  {generate, authz.Generate},
	runspec.PreviewWorkflow:   {preview, authz.Preview},
	runspec.DriftWorkflow:     {drift, authz.DriftCheck},
	runspec.StatusWorkflow:    {stackStat, authz.Status},
	runspec.RolloutWorkflow:   {rolloutRun, authz.Apply},
	// A sync tick starts applies (or previews) of the commits it finds.
	runspec.SyncWorkflow: {syncTick, authz.Apply},
	// A collection removes records of every project: an admin's.
	runspec.GCWorkflow: {gcRun, authz.AdminAction},
	// Queuing a run takes the deployer's right, as starting it does (apply,
	// destroy and rollback all need deployer): each queued run is started
	// as the subject whose enqueue signal the frontend stamped.
	runspec.QueueWorkflow: {queueRun, authz.Apply},
}

// signalAction is what sending a signal to a run takes; a signal kumo does
// not define takes an admin.
func signalAction(name string) authz.Action {
	switch name {
	case runspec.ApprovalSignal:
		return authz.Approve
	case runspec.CancelSignal, runspec.DequeueSignal:
		return authz.Cancel
	case runspec.EnqueueSignal:
		return authz.Apply
	}
	return authz.Terminate
}

// updateAction is what an update takes.
func updateAction(name string) authz.Action {
	if name == runspec.ApproveUpdate {
		return authz.Approve
	}
	return authz.Terminate
}
