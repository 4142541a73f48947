package runspec

import (
	"fmt"
	"strings"
	"time"
)

// MutatingWorkflowID is the ID of the apply or destroy run of a project+workspace:
// one ID, so Temporal itself refuses a second concurrent run.
func MutatingWorkflowID(project, workspace string) string {
	return fmt.Sprintf("kumo/%s/%s", project, workspace)
}

// DriftWorkflowID names one drift check of project+workspace: checks never
// block applies, nor each other.
func DriftWorkflowID(project, workspace string, at time.Time) string {
	return fmt.Sprintf("kumo-drift/%s/%s/%d", project, workspace, at.UnixNano())
}

// StatusWorkflowID names one status read of project+workspace: reads never
// block applies, nor each other.
func StatusWorkflowID(project, workspace string, at time.Time) string {
	return fmt.Sprintf("kumo-status/%s/%s/%d", project, workspace, at.UnixNano())
}

// DriftScheduleID is the ID of the Temporal Schedule that checks a stack;
// Temporal appends each check's time to its action's workflow ID.
func DriftScheduleID(project, workspace string) string {
	return DriftSchedulePrefix + project + "/" + workspace
}

// DriftSchedulePrefix starts the ID of every drift schedule.
const DriftSchedulePrefix = "kumo-drift/"

// StackOfWorkflowID is the project and workspace a kumo workflow ID names
// (every form above, and the IDs a drift schedule gives its checks); ok is
// false for an ID of another form.
func StackOfWorkflowID(id string) (project, workspace string, ok bool) {
	seg := strings.SplitN(id, "/", 4)
	if len(seg) < 3 || seg[1] == "" || seg[2] == "" {
		return "", "", false
	}
	switch seg[0] {
	case "kumo", "kumo-drift", "kumo-status", "kumo-sync":
		return seg[1], seg[2], true
	}
	return "", "", false
}
