package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Error types the workflows and the client recognise.
const (
	ErrTypeLocked  = "ReleaseLocked"
	ErrTypeInvalid = "InvalidSpec"
	ErrTypeNode    = "ResourceFailed"
)

// CreateReleaseInput names the release a run is about to make.
type CreateReleaseInput struct {
	Project    string           `json:"project"`
	Workspace  string           `json:"workspace"`
	Stack      string           `json:"stack,omitempty"`
	Operation  engine.Operation `json:"operation"`
	SpecHash   string           `json:"specHash,omitempty"` // empty for destroy: the desired spec is empty
	RollbackOf int              `json:"rollbackOf,omitempty"`
	WorkflowID string           `json:"workflowID"`
	RunID      string           `json:"runID"`
}

// ReleaseInfo is what a run needs to know about its release.
type ReleaseInfo struct {
	Key      backend.ReleaseKey `json:"key"`
	SpecHash string             `json:"specHash"`
	// PriorRevision is the release whose state the run starts from (0: none).
	PriorRevision int `json:"priorRevision"`
}

// CreateRelease makes revision latest+1 for this run, or returns the one this run
// already made (the activity may be retried after a crash).
//
// It refuses while the latest release is unfinished and its run is alive. An
// unfinished release whose run is gone (terminated, timed out) is closed as failed
// first, so a dead run never blocks a workspace forever.
func (a *Activities) CreateRelease(ctx context.Context, in CreateReleaseInput) (ReleaseInfo, error) {
	specHash := in.SpecHash
	if in.Operation == engine.OperationDestroy {
		h, err := a.backend.PutSpec(ctx, &engine.Spec{})
		if err != nil {
			return ReleaseInfo{}, err
		}
		specHash = h
	}
	for {
		latest, err := a.backend.LatestRelease(ctx, in.Project, in.Workspace)
		if err != nil && !errors.Is(err, backend.ErrNotFound) {
			return ReleaseInfo{}, err
		}
		prior := 0
		if latest != nil {
			if latest.WorkflowID == in.WorkflowID && latest.RunID == in.RunID {
				return releaseInfo(latest), nil
			}
			if !latest.Phase.Final() {
				if err := a.closeAbandoned(ctx, latest); err != nil {
					return ReleaseInfo{}, err
				}
			}
			prior = latest.Revision
		}
		now := time.Now().UTC()
		r := &engine.Release{
			Project: in.Project, Workspace: in.Workspace, Stack: in.Stack,
			Revision: prior + 1, Operation: in.Operation, Phase: engine.PhasePreviewing,
			SpecHash: specHash, RollbackOf: in.RollbackOf, CreateTime: now, ModifyTime: now,
			WorkflowID: in.WorkflowID, RunID: in.RunID,
		}
		err = a.backend.CreateRelease(ctx, r)
		if errors.Is(err, backend.ErrRevisionExists) {
			continue // another creator won this revision; look again
		}
		if err != nil {
			return ReleaseInfo{}, err
		}
		return releaseInfo(r), nil
	}
}

// releaseInfo describes a release this run already created: its prior is the
// revision before it, which was final when the release was created.
func releaseInfo(r *engine.Release) ReleaseInfo {
	return ReleaseInfo{Key: backend.KeyOf(r), SpecHash: r.SpecHash, PriorRevision: r.Revision - 1}
}

// closeAbandoned fails an unfinished release whose run has ended, or refuses when
// that run is still going.
func (a *Activities) closeAbandoned(ctx context.Context, r *engine.Release) error {
	running, err := a.runs.Running(ctx, r.WorkflowID, r.RunID)
	if err != nil {
		return fmt.Errorf("check run %s of revision %d: %w", r.RunID, r.Revision, err)
	}
	if running {
		return temporal.NewNonRetryableApplicationError(lockedMessage(r), ErrTypeLocked, nil)
	}
	_, err = a.finish(ctx, backend.KeyOf(r), engine.PhaseFailed, fmt.Sprintf("abandoned: run %s ended before finishing the release", r.RunID), nil)
	return err
}

func lockedMessage(r *engine.Release) string {
	return fmt.Sprintf("%s/%s: revision %d is %s by run %s (workflow %s), which is still running; wait for it to finish, or run `kumo resume` if the kumo that started it was killed",
		r.Project, r.Workspace, r.Revision, r.Phase, r.RunID, r.WorkflowID)
}

// SetPhaseInput moves a running release to another non-final phase.
type SetPhaseInput struct {
	Key   backend.ReleaseKey `json:"key"`
	Phase engine.Phase       `json:"phase"`
}

// SetReleasePhase records that a release moved on (e.g. previewing -> applying).
func (a *Activities) SetReleasePhase(ctx context.Context, in SetPhaseInput) error {
	r, err := a.backend.GetRelease(ctx, in.Key.Project, in.Key.Workspace, in.Key.Revision)
	if err != nil {
		return err
	}
	if r.Phase == in.Phase {
		return nil
	}
	if r.Phase.Final() {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("revision %d is already %s", r.Revision, r.Phase), ErrTypeLocked, nil)
	}
	r.Phase = in.Phase
	r.ModifyTime = time.Now().UTC()
	return a.backend.UpdateRelease(ctx, r)
}

// FinishInput ends a release.
type FinishInput struct {
	Key          backend.ReleaseKey   `json:"key"`
	Phase        engine.Phase         `json:"phase"`
	Error        string               `json:"error,omitempty"`
	Compensation *engine.Compensation `json:"compensation,omitempty"`
}

// FinishResult summarises the recorded release.
type FinishResult struct {
	Resources int `json:"resources"`
}

// FinishRelease folds the run's per-resource state entries into the release and
// marks it succeeded or failed. Running it again after it finished changes nothing.
func (a *Activities) FinishRelease(ctx context.Context, in FinishInput) (FinishResult, error) {
	return a.finish(ctx, in.Key, in.Phase, in.Error, in.Compensation)
}

// finish writes the release once with its whole state: the prior state, overlaid
// with every resource this run applied or deleted. A failed release therefore still
// records what exists, including objects applied before the failure.
func (a *Activities) finish(ctx context.Context, key backend.ReleaseKey, phase engine.Phase, msg string, comp *engine.Compensation) (FinishResult, error) {
	r, err := a.backend.GetRelease(ctx, key.Project, key.Workspace, key.Revision)
	if err != nil {
		return FinishResult{}, err
	}
	if r.Phase.Final() {
		// Finished before a crash; the entries may not have been cleared yet.
		return FinishResult{Resources: stateLen(r.State)}, a.backend.ClearStateEntries(ctx, key)
	}
	spec, err := a.spec(ctx, r.SpecHash)
	if err != nil {
		return FinishResult{}, err
	}
	var prior *engine.Release
	if key.Revision > 1 {
		if prior, err = a.priorRelease(ctx, key.Project, key.Workspace, key.Revision-1); err != nil {
			return FinishResult{}, err
		}
	}
	entries, err := a.backend.ListStateEntries(ctx, key)
	if err != nil {
		return FinishResult{}, err
	}
	if err := a.writeReleaseLog(ctx, r, phase, msg, comp, entries); err != nil {
		return FinishResult{}, err
	}
	r.Spec = spec.Spec
	r.State = foldState(spec.Spec, prior, entries)
	r.Phase = phase
	r.Error = msg
	r.Compensation = comp
	r.ModifyTime = time.Now().UTC()
	if err := a.backend.UpdateRelease(ctx, r); err != nil {
		return FinishResult{}, err
	}
	if err := a.backend.ClearStateEntries(ctx, key); err != nil {
		return FinishResult{}, err
	}
	return FinishResult{Resources: len(r.State.Resources)}, nil
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

// LatestFinalInput names a project+workspace.
type LatestFinalInput struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
}

// LatestFinalRevision returns the newest finished revision (0: none), the state a
// preview compares against while an apply may be running.
func (a *Activities) LatestFinalRevision(ctx context.Context, in LatestFinalInput) (int, error) {
	latest, err := a.backend.LatestRelease(ctx, in.Project, in.Workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for rev := latest.Revision; rev > 0; rev-- {
		r := latest
		if rev != latest.Revision {
			if r, err = a.backend.GetRelease(ctx, in.Project, in.Workspace, rev); err != nil {
				return 0, err
			}
		}
		if r.Phase.Final() {
			return rev, nil
		}
	}
	return 0, nil
}

// RunLogRelease is the run-log part FinishRelease writes.
const RunLogRelease = "50-release"

// writeReleaseLog records in the run's log how its release ended: each resource
// applied or deleted, what was undone, and the error. It is written under the run
// that owned the release, which is not the caller when an abandoned release is
// closed.
func (a *Activities) writeReleaseLog(ctx context.Context, r *engine.Release, phase engine.Phase, msg string, comp *engine.Compensation, entries map[string]backend.StateEntry) error {
	if r.RunID == "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s/%s, revision %d\n", r.Operation, r.Project, r.Workspace, r.Revision)
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		verb := "applied"
		if entries[id].Deleted {
			verb = "deleted"
		}
		fmt.Fprintf(&b, "%s %s\n", verb, id)
	}
	if comp != nil {
		for _, id := range comp.Resources {
			fmt.Fprintf(&b, "undone %s\n", id)
		}
		for _, e := range comp.Errors {
			fmt.Fprintf(&b, "undo failed: %s\n", e)
		}
	}
	fmt.Fprintf(&b, "revision %d %s", r.Revision, phase)
	if msg != "" {
		fmt.Fprintf(&b, ": %s", msg)
	}
	b.WriteString("\n")
	if err := a.backend.PutRunLog(ctx, r.RunID, RunLogRelease, []byte(b.String())); err != nil {
		return fmt.Errorf("write run log of %s: %w", r.RunID, err)
	}
	return nil
}
