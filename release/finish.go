package release

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// FinishInput ends a release.
type FinishInput struct {
	Key          backend.ReleaseKey
	Phase        engine.Phase
	Error        string
	Compensation *engine.Compensation
	// People are who the run recorded as starting, approving, rejecting or
	// cancelling it (added to the release's).
	People engine.People
	// Hooks are the hooks the run ran (RunHooks), in order.
	Hooks []engine.HookRun
}

// RunLogRelease is the run-log part Finish writes.
const RunLogRelease = "50-release"

// Finish writes the release once with its whole state: the prior state, overlaid
// with every resource this run applied or deleted, and marks it succeeded or
// failed. A failed release therefore still records what exists, including
// objects applied before the failure. Finishing a finished release changes
// nothing (only leftover entries are cleared). It returns how many resources the
// release records.
func (m *Manager) Finish(ctx context.Context, in FinishInput) (int, error) {
	key := in.Key
	r, err := m.backend.GetRelease(ctx, key.Project, key.Workspace, key.Revision)
	if err != nil {
		return 0, err
	}
	if r.Phase.Final() {
		// Finished before a crash; the entries may not have been cleared yet.
		return stateLen(r.State), m.backend.ClearStateEntries(ctx, key)
	}
	spec, err := m.spec(ctx, r.SpecHash)
	if err != nil {
		return 0, err
	}
	var prior *engine.Release
	if key.Revision > 1 {
		if prior, err = m.priorRelease(ctx, key.Project, key.Workspace, key.Revision-1); err != nil {
			return 0, err
		}
	}
	entries, err := m.backend.ListStateEntries(ctx, key)
	if err != nil {
		return 0, err
	}
	if err := m.writeReleaseLog(ctx, r, in, entries); err != nil {
		return 0, err
	}
	r.Spec = spec.Spec
	r.State = foldState(spec.Spec, prior, entries)
	r.Retained = retained(entries)
	r.Phase = in.Phase
	r.Error = in.Error
	r.Compensation = in.Compensation
	r.Hooks = in.Hooks
	r.People = r.People.Merge(in.People)
	r.ModifyTime = time.Now().UTC()
	if err := m.backend.UpdateRelease(ctx, r); err != nil {
		return 0, err
	}
	if err := m.backend.ClearStateEntries(ctx, key); err != nil {
		return 0, err
	}
	if r.Phase.Final() {
		// The next run of the workspace starts from this release (Begin,
		// latestRelease): kept whole, as written, it need not be read back.
		m.priors.put(key, indexedPrior(r))
	}
	return len(r.State.Resources), nil
}

// foldState orders resources as in the spec, then any leftovers from the prior
// state that this run did not delete (in prior order).
func foldState(spec *engine.Spec, prior *engine.Release, entries map[string]backend.StateEntry) *engine.State {
	byID := map[string]engine.Resource{}
	var order []string
	add := func(id string, r engine.Resource) {
		if _, seen := byID[id]; !seen {
			order = append(order, id)
		}
		byID[id] = r
	}
	if prior != nil && prior.State != nil {
		for _, r := range prior.State.Resources {
			add(r.ID, r)
		}
	}
	for id, e := range entries {
		if e.Deleted {
			delete(byID, id)
			continue
		}
		if e.Resource != nil {
			add(id, *e.Resource)
		}
	}
	rank := map[string]int{}
	for i, r := range spec.Resources {
		rank[r.ID] = i
	}
	state := &engine.State{Resources: []engine.Resource{}}
	for _, id := range order {
		if r, ok := byID[id]; ok {
			state.Resources = append(state.Resources, r)
		}
	}
	slices.SortStableFunc(state.Resources, func(x, y engine.Resource) int {
		rx, okx := rank[x.ID]
		ry, oky := rank[y.ID]
		switch {
		case okx && oky:
			return rx - ry
		case okx:
			return -1
		case oky:
			return 1
		}
		return 0
	})
	return state
}

func stateLen(s *engine.State) int {
	if s == nil {
		return 0
	}
	return len(s.Resources)
}

// writeReleaseLog records in the run's log how its release ended: each resource
// applied or deleted, what was undone, and the error. It is written under the run
// that owned the release, which is not the caller when an abandoned release is
// closed.
func (m *Manager) writeReleaseLog(ctx context.Context, r *engine.Release, in FinishInput, entries map[string]backend.StateEntry) error {
	if r.RunID == "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s/%s, revision %d\n", r.Operation, r.Project, r.Workspace, r.Revision)
	for _, line := range r.People.Merge(in.People).Lines() {
		b.WriteString(line + "\n")
	}
	surgery := r.Surgery != nil
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		verb := "applied"
		switch {
		case surgery && entries[id].Deleted:
			verb = "no longer recorded (left live)"
		case surgery:
			verb = "recorded"
		case entries[id].Deleted:
			verb = "deleted"
		}
		fmt.Fprintf(&b, "%s %s\n", verb, id)
	}
	if comp := in.Compensation; comp != nil {
		for _, id := range comp.Resources {
			fmt.Fprintf(&b, "undone %s\n", id)
		}
		for _, e := range comp.Errors {
			fmt.Fprintf(&b, "undo failed: %s\n", e)
		}
	}
	fmt.Fprintf(&b, "revision %d %s", r.Revision, in.Phase)
	if in.Error != "" {
		fmt.Fprintf(&b, ": %s", in.Error)
	}
	b.WriteString("\n")
	if err := m.backend.PutRunLog(ctx, r.RunID, RunLogRelease, []byte(b.String())); err != nil {
		return fmt.Errorf("write run log of %s: %w", r.RunID, err)
	}
	return nil
}

// retained lists, sorted, the resources the run left live for their retain
// policy instead of deleting them.
func retained(entries map[string]backend.StateEntry) []string {
	var ids []string
	for id, e := range entries {
		if e.Deleted && e.Retained {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
