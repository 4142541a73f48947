package runspec

import (
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// ChangeCounts is the preview in numbers, kept in the run's memo (ChangesMemo)
// so a list of runs shows them without asking each run.
type ChangeCounts struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Delete    int `json:"delete"`
	Unchanged int `json:"unchanged"`
	// Adopt counts live resources kumo takes over unchanged.
	Adopt int `json:"adopt,omitempty"`
	// Forget and Move count what a forget or move run changes in the record.
	Forget int `json:"forget,omitempty"`
	Move   int `json:"move,omitempty"`
}

// String is the counts as `+create ~update -delete`.
func (c ChangeCounts) String() string {
	s := fmt.Sprintf("+%d ~%d -%d", c.Create, c.Update, c.Delete)
	if c.Adopt > 0 {
		s += fmt.Sprintf(" adopt %d", c.Adopt)
	}
	if c.Forget > 0 {
		s += fmt.Sprintf(" forget %d", c.Forget)
	}
	if c.Move > 0 {
		s += fmt.Sprintf(" move %d", c.Move)
	}
	return s
}

// CountChanges counts a preview's changes per action.
func CountChanges(changes []engine.Change) ChangeCounts {
	var c ChangeCounts
	for _, ch := range changes {
		c.add(ch.Action)
	}
	return c
}

// add counts one resource under action a.
func (c *ChangeCounts) add(a engine.Action) {
	switch a {
	case engine.Create:
		c.Create++
	case engine.Update:
		c.Update++
	case engine.Delete:
		c.Delete++
	case engine.Adopt:
		c.Adopt++
	case engine.Forget:
		c.Forget++
	case engine.Move:
		c.Move++
	default:
		c.Unchanged++
	}
}
