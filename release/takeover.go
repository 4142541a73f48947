package release

import (
	"context"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// force reports whether an apply of in's resource takes over fields other
// managers own: always for a resource kumo recorded (its desired state wins
// over a change made outside it), and for one it has not recorded (taking
// over an object made by someone else) only when the run says so
// (--force-conflicts); otherwise the runtime refuses, naming the fields.
func force(in Node, prior *engine.Resource) bool {
	return prior != nil || in.Settings.ForceConflicts
}

// takeover names, on a change that makes kumo manage a live resource it has
// not recorded (an Adopt, or an Update of such a resource), who manages it
// now, when the runtime can tell.
func takeover(ctx context.Context, rt runtime.Runtime, c *engine.Change, target, live, prior, planned *engine.Resource) error {
	if live == nil || prior != nil || planned == nil {
		return nil
	}
	ml, ok := rt.(runtime.Managers)
	if !ok {
		return nil
	}
	managers, err := ml.FieldManagers(ctx, target)
	if err != nil {
		return nodeError(err)
	}
	c.TakingOverFrom = managers
	return nil
}
