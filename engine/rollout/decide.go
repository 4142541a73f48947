package rollout

import (
	"fmt"
	"slices"

	"github.com/kumoproj/kumo/engine/health"
)

// Outcome is what one workspace's apply in the rollout did.
type Outcome struct {
	Workspace string `json:"workspace"`
	// Prior is the workspace's latest succeeded revision before the rollout
	// applied it (0: it had none).
	Prior int `json:"prior,omitempty"`
	// Revision is the revision the apply made (0: it made none, e.g. it
	// failed before its release was created).
	Revision int `json:"revision,omitempty"`
	// Seq orders the outcomes by when each apply finished.
	Seq int `json:"seq"`
}

// Undo is one rollback: Workspace back to revision To.
type Undo struct {
	Workspace string `json:"workspace"`
	To        int    `json:"to"`
}

// Kept is a workspace the undo leaves as it is, and why.
type Kept struct {
	Workspace string `json:"workspace"`
	Reason    string `json:"reason"`
}

// UndoPlan is what --undo-on-failure rolls back: every workspace whose apply
// made a revision (succeeded or failed), newest first, to the revision it had
// before. A workspace the rollout changed nothing in (no revision, or its
// revision was its prior one) is not touched; one that had no succeeded
// revision before is kept and reported: going back to nothing is a destroy,
// which the rollout leaves to a person.
func UndoPlan(outcomes []Outcome) (undo []Undo, kept []Kept) {
	sorted := slices.Clone(outcomes)
	slices.SortStableFunc(sorted, func(a, b Outcome) int { return b.Seq - a.Seq })
	for _, o := range sorted {
		switch {
		case o.Revision == 0 || o.Revision == o.Prior:
			continue
		case o.Prior == 0:
			kept = append(kept, Kept{Workspace: o.Workspace, Reason: fmt.Sprintf("revision %d is its first succeeded one; nothing earlier to roll back to (kumo destroy removes it)", o.Revision)})
		default:
			undo = append(undo, Undo{Workspace: o.Workspace, To: o.Prior})
		}
	}
	return undo, kept
}

// Healthy reports whether a workspace whose resources are at status passes
// a bake check: every resource Healthy (a Suspended one was paused on
// purpose, and passes too).
func Healthy(status health.Status) bool {
	return status == health.Healthy || status == health.Suspended
}
