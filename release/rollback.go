package release

import (
	"context"

	"github.com/kumoproj/kumo/engine"
)

// RollbackTarget returns the release a rollback of project+workspace restores:
// revision, or with revision 0 the last succeeded apply (or rollback) before the
// latest release. A target that did not succeed is refused unless allowFailed,
// and one the release history limit removed is refused naming the oldest kept
// revision. Every refusal is ErrNoTarget.
func (m *Manager) RollbackTarget(ctx context.Context, project, workspace string, revision int, allowFailed bool) (*engine.Release, error) {
	// Summaries to choose by; only the chosen release is read whole.
	sums, err := m.backend.ListReleaseSummaries(ctx, project, workspace)
	if err != nil {
		return nil, err
	}
	releases := make([]*engine.Release, len(sums))
	for i, s := range sums {
		releases[i] = s.Release
	}
	whole := func(r *engine.Release) (*engine.Release, error) {
		return m.backend.GetRelease(ctx, project, workspace, r.Revision)
	}
	if len(releases) < 2 {
		return nil, kindf(ErrNoTarget, "nothing to roll back to: %s/%s has %d release(s)", project, workspace, len(releases))
	}
	latest := releases[len(releases)-1]
	if revision == 0 {
		for i := len(releases) - 2; i >= 0; i-- {
			if r := releases[i]; r.Phase == engine.PhaseSucceeded && r.Operation != engine.OperationDestroy {
				return whole(r)
			}
		}
		return nil, kindf(ErrNoTarget, "nothing to roll back to: no succeeded apply before revision %d of %s/%s", latest.Revision, project, workspace)
	}
	oldest := releases[0].Revision
	if revision < 1 || revision > latest.Revision {
		return nil, kindf(ErrNoTarget, "cannot roll back to revision %d: %s/%s has revisions %d to %d", revision, project, workspace, oldest, latest.Revision)
	}
	if revision < oldest {
		return nil, kindf(ErrNoTarget, "cannot roll back to revision %d of %s/%s: the release history limit (--retain-releases) removed it; the oldest kept revision is %d",
			revision, project, workspace, oldest)
	}
	// Kept revisions are gapless from the oldest.
	target := releases[revision-oldest]
	if target.Phase != engine.PhaseSucceeded && !allowFailed {
		return nil, kindf(ErrNoTarget, "revision %d is %s (%s); roll back to it anyway with --allow-failed", revision, target.Phase, target.Error)
	}
	return whole(target)
}

// LatestSucceeded is the newest succeeded release of project/workspace that
// is not a destroy: where a rollout's undo puts the workspace back (nil: it
// has none).
func (m *Manager) LatestSucceeded(ctx context.Context, project, workspace string) (*engine.Release, error) {
	releases, err := m.backend.ListReleases(ctx, project, workspace)
	if err != nil {
		return nil, err
	}
	for i := len(releases) - 1; i >= 0; i-- {
		if r := releases[i]; r.Phase == engine.PhaseSucceeded && r.Operation != engine.OperationDestroy {
			return r, nil
		}
	}
	return nil, nil
}
