package release

import (
	"context"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/runspec"
)

// CheckSource is one tick of a sync: the commit the source's ref is at (one
// ls-remote, nothing fetched) against the commit the stack's sync last
// started a run for. A different commit, newer or older (a force-push back),
// is due; the same one is not.
func (m *Manager) CheckSource(ctx context.Context, in runspec.SyncInput) (runspec.SyncCheck, error) {
	src, err := m.backend.GetSource(ctx, in.Source)
	if err != nil {
		return runspec.SyncCheck{}, kindErr(ErrGenerate, err)
	}
	if src.Project != in.Project {
		return runspec.SyncCheck{}, kindErr(ErrGenerate, fmt.Errorf("source %s deploys project %q, not %q", src.Name, src.Project, in.Project))
	}
	commit, err := (&gitsource.Git{}).Resolve(ctx, src)
	if err != nil {
		return runspec.SyncCheck{}, err // a remote that does not answer may next time: retried
	}
	st, err := m.backend.GetSyncState(ctx, in.Project, in.Workspace)
	if err != nil {
		return runspec.SyncCheck{}, kindf(ErrBackend, "%v", err)
	}
	if st.Commit == "" {
		// Never synced: the stack's latest release, if it deployed this
		// source (kumo apply --source), is what the sync starts from.
		if latest, err := m.backend.LatestRelease(ctx, in.Project, in.Workspace); err == nil && latest.Git != nil && latest.Git.Source == src.Name {
			st.Commit = latest.Git.Commit
		}
	}
	d := st.Decide(commit)
	return runspec.SyncCheck{
		Start: d.Start, Skipped: d.Skipped, Stack: src.Stack,
		Git: &engine.GitOrigin{Source: src.Name, URL: src.URL, Ref: src.Ref, Commit: commit, Path: src.Path},
	}, nil
}

// RecordSync stores what a tick did: the run it started (its commit is the
// last started from then on), or that the stack was busy (the commit stays
// pending, to be reported as skipped if a newer one is deployed first).
func (m *Manager) RecordSync(ctx context.Context, r runspec.SyncRecord) error {
	st, err := m.backend.GetSyncState(ctx, r.Project, r.Workspace)
	if err != nil {
		return kindf(ErrBackend, "%v", err)
	}
	st.Source = r.Source
	if r.Busy {
		st.Busy(r.Commit)
	} else {
		st.Started(gitsource.Decision{Start: true, Commit: r.Commit, Skipped: r.Skipped}, r.WorkflowID, r.RunID, time.Now().UTC())
	}
	if err := m.backend.PutSyncState(ctx, st); err != nil {
		return kindf(ErrBackend, "%v", err)
	}
	return nil
}
