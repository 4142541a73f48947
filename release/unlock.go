package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Unlock closes the latest release as failed when it was left unfinished by a run
// that is no longer running (what `kumo release unlock` does), and returns it as
// recorded. It refuses with ErrNotLocked when the latest release is final and
// with a *LockedError (ErrLocked), naming the run, while that run is alive.
// Unlocking twice gives ErrNotLocked the second time.
func (m *Manager) Unlock(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := m.Latest(ctx, project, workspace)
	if err != nil {
		return nil, err
	}
	if r.Phase.Final() {
		return nil, kindf(ErrNotLocked, "nothing to unlock: revision %d of %s/%s is %s", r.Revision, project, workspace, r.Phase)
	}
	// A run this Temporal does not know is the operator's call: unlocking is
	// how they say it is gone.
	running, err := m.runs.Running(ctx, r.WorkflowID, r.RunID)
	if errors.Is(err, ErrRunUnknown) {
		running, err = false, nil
	}
	if err != nil {
		return nil, fmt.Errorf("check run %s: %w", r.RunID, err)
	}
	if running {
		return nil, &LockedError{Release: r, msg: fmt.Sprintf("revision %d of %s/%s is %s by run %s (workflow %s), which is still running; follow it with `kumo resume` instead of unlocking",
			r.Revision, project, workspace, r.Phase, r.RunID, r.WorkflowID)}
	}
	key := backend.KeyOf(r)
	in := FinishInput{Key: key, Phase: engine.PhaseFailed, Error: "unlocked by `kumo release unlock`: its run " + r.RunID + " ended without finishing it"}
	if _, err := m.Finish(ctx, in); err != nil {
		return nil, err
	}
	return m.backend.GetRelease(ctx, project, workspace, r.Revision)
}
