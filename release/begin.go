package release

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// BeginInput names the release a run is about to make.
type BeginInput struct {
	Project    string
	Workspace  string
	Stack      string
	Operation  engine.Operation
	SpecHash   string // empty for destroy: the desired spec is empty
	RollbackOf int
	Reason     string
	Label      engine.ReleaseLabel
	WorkflowID string
	RunID      string
	// StartedBy is who started the run, as the run recorded them.
	StartedBy *engine.Actor
	// Chart is the Helm chart the spec was rendered from, if it was.
	Chart *engine.ChartSource
	// Surgery is what a forget or move release changes in the record
	// (Operation forget or move; SpecHash is then derived from the prior
	// release).
	Surgery *engine.Surgery
	// Target narrows the run to some resources (--target): the release
	// records that it is partial.
	Target *engine.Targeting
	// Git is the git source commit the spec was generated from, if it was.
	Git *engine.GitOrigin
}

// Info is what a run needs to know about its release.
type Info struct {
	Key      backend.ReleaseKey
	SpecHash string
	// PriorRevision is the release whose state the run starts from (0: none).
	PriorRevision int
	// Approval is the workspace's approval policy as the release was made:
	// the rules the run's approvals answer to, read from the backend, where
	// only the workspace's administrators write it.
	Approval engine.ApprovalPolicy
	// Policies: plan policies apply to the run (the operator's, or the
	// workspace's as stored).
	Policies bool
	// Surgery is the change list of a forget or move release, for its
	// approval.
	Surgery []engine.Change
	// PreviewRecorded: the release is this run's, made before a crash, and
	// the run kept its previews before it changed anything (RecordPreview):
	// the run goes on from them (RecordedPreview).
	PreviewRecorded bool
}

// Begin makes revision latest+1 for this run, or returns the one this run
// already made (a retry after a crash gets the same release).
//
// It refuses with a *LockedError (ErrLocked) while the latest release is
// unfinished and its run is alive, or unknown to this Temporal (another
// machine's, sharing the backend, may be running it). An unfinished release
// whose run is gone (terminated, timed out) is closed as failed first, so a dead
// run never blocks a workspace forever. Two runs racing for the same revision are settled by the
// backend's atomic create: the loser looks again.
func (m *Manager) Begin(ctx context.Context, in BeginInput) (Info, error) {
	if err := in.Label.Validate(); err != nil {
		return Info{}, kindf(ErrInvalid, "%v", err)
	}
	surgery := in.Operation == engine.OperationForget || in.Operation == engine.OperationMove
	if in.Surgery != nil && !surgery {
		return Info{}, kindf(ErrInvalid, "a %s run carries no forget or move (kumo release forget / mv start those)", in.Operation)
	}
	specHash := in.SpecHash
	if in.Operation == engine.OperationDestroy {
		h, err := m.backend.PutSpec(ctx, &engine.Spec{})
		if err != nil {
			return Info{}, err
		}
		specHash = h
	}
	specRead := m.readSpecAhead(ctx, specHash)
	defer func() { <-specRead }()
	policy, err := m.approvalPolicy(ctx, in.Workspace)
	if err != nil {
		return Info{}, err
	}
	rules, err := m.Policies(ctx, in.Workspace)
	if err != nil {
		return Info{}, err
	}
	info, err := m.begin(ctx, in, specHash, specRead)
	info.Approval, info.Policies = policy, rules.Len() > 0
	return info, err
}

// approvalPolicy reads the workspace's approval policy. A workspace that is
// not stored (default, or one a run names without it existing) has none; a
// workspace that cannot be read fails the run rather than run without its
// rules.
func (m *Manager) approvalPolicy(ctx context.Context, workspace string) (engine.ApprovalPolicy, error) {
	ws, err := m.backend.GetWorkspace(ctx, workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return engine.ApprovalPolicy{}, nil
	}
	if err != nil {
		return engine.ApprovalPolicy{}, fmt.Errorf("read the approval policy of workspace %s: %w", workspace, err)
	}
	return ws.Approval, nil
}

func (m *Manager) begin(ctx context.Context, in BeginInput, specHash string, specRead <-chan struct{}) (Info, error) {
	for {
		latest, kept, err := m.latestRelease(ctx, in.Project, in.Workspace)
		if err != nil && !errors.Is(err, backend.ErrNotFound) {
			return Info{}, err
		}
		prior := 0
		if latest != nil {
			ours := latest.WorkflowID == in.WorkflowID && latest.RunID == in.RunID
			if ours && latest.Operation == engine.OperationMove && in.Operation == engine.OperationApply && latest.Surgery != nil {
				// A move this apply recorded before a crash: finish it and go on.
				if err := m.finishMove(ctx, latest); err != nil {
					return Info{}, err
				}
				ours = false
			}
			if ours {
				info := infoOf(latest)
				_, recorded, err := m.backend.GetPreview(ctx, info.Key)
				if err != nil {
					return Info{}, err
				}
				info.PreviewRecorded = recorded
				if latest.Surgery != nil {
					plan, err := m.planSurgery(ctx, in.Project, in.Workspace, info.PriorRevision, *latest.Surgery)
					if err != nil {
						return Info{}, err
					}
					info.Surgery = plan.Changes
				}
				return info, nil
			}
			if !latest.Phase.Final() {
				if err := m.closeAbandoned(ctx, latest); err != nil {
					return Info{}, err
				}
			}
			prior = latest.Revision
		}
		if in.Operation == engine.OperationApply && in.SpecHash != "" && prior > 0 {
			<-specRead
			moved, err := m.recordMove(ctx, in, prior)
			if errors.Is(err, backend.ErrRevisionExists) {
				continue // another creator won this revision; look again
			}
			if err != nil {
				return Info{}, err
			}
			if moved {
				continue // the move is the latest release now: the next may apply to it
			}
		}
		if err := m.versionFree(ctx, in.Project, in.Workspace, in.Label.Version); err != nil {
			return Info{}, err
		}
		var surgery []engine.Change
		if in.Operation == engine.OperationForget || in.Operation == engine.OperationMove {
			if specHash, surgery, err = m.beginSurgery(ctx, in, prior); err != nil {
				return Info{}, err
			}
		}
		now := time.Now().UTC()
		r := &engine.Release{
			Project: in.Project, Workspace: in.Workspace, Stack: in.Stack,
			Revision: prior + 1, Operation: in.Operation, Phase: engine.PhasePreviewing,
			SpecHash: specHash, RollbackOf: in.RollbackOf, Reason: in.Reason, Chart: in.Chart, CreateTime: now, ModifyTime: now,
			WorkflowID: in.WorkflowID, RunID: in.RunID,
		}
		r.StartedBy, r.Label, r.Surgery, r.Target, r.Git = in.StartedBy, in.Label, in.Surgery, in.Target, in.Git
		err = m.backend.CreateRelease(ctx, r)
		if errors.Is(err, backend.ErrRevisionExists) {
			continue // another creator won this revision; look again
		}
		if err != nil {
			return Info{}, err
		}
		if latest != nil && latest.Revision == prior && latest.Phase.Final() && !kept {
			// The latest release, read whole, is the new one's prior: the
			// plan, the preview and the finish read it next. A final
			// release never changes, so they take this copy rather than
			// decode its state again (a large state's decode is seconds).
			m.priors.put(backend.KeyOf(latest), indexedPrior(latest))
		}
		info := infoOf(r)
		info.Surgery = surgery
		return info, nil
	}
}

// latestRelease is the latest release of project/workspace, read whole,
// and whether it is the copy this worker keeps: one it finished itself
// (Finish keeps it) or read whole before, when the backend's head names it
// still (the same revision, final, of the same run, phase and spec). A
// final release never changes, and decoding a large one was most of what
// creating the next release cost.
func (m *Manager) latestRelease(ctx context.Context, project, workspace string) (_ *engine.Release, kept bool, _ error) {
	// Keeping none of the workspace's releases, the head would only be read
	// before the whole release.
	if !m.priors.has(func(k backend.ReleaseKey) bool { return k.Project == project && k.Workspace == workspace }) {
		latest, err := m.backend.LatestRelease(ctx, project, workspace)
		return latest, false, err
	}
	head, err := m.backend.LatestReleaseHead(ctx, project, workspace)
	if err != nil {
		return nil, false, err
	}
	key := backend.ReleaseKey{Project: project, Workspace: workspace, Revision: head.Revision}
	if p, ok := m.priors.get(key); ok && head.Phase.Final() && head.RunID != "" &&
		p.rel.RunID == head.RunID && p.rel.Phase == head.Phase && p.rel.SpecHash == head.SpecHash && p.rel.Operation == head.Operation {
		return p.rel, true, nil
	}
	latest, err := m.backend.LatestRelease(ctx, project, workspace)
	return latest, false, err
}

// infoOf describes a release this run already created: its prior is the
// revision before it, which was final when the release was created.
func infoOf(r *engine.Release) Info {
	return Info{Key: backend.KeyOf(r), SpecHash: r.SpecHash, PriorRevision: r.Revision - 1}
}

// closeAbandoned fails an unfinished release whose run has ended, or refuses when
// that run is still going.
func (m *Manager) closeAbandoned(ctx context.Context, r *engine.Release) error {
	running, err := m.runs.Running(ctx, r.WorkflowID, r.RunID)
	if errors.Is(err, ErrRunUnknown) {
		return lockedElsewhere(r)
	}
	if err != nil {
		return fmt.Errorf("check run %s of revision %d: %w", r.RunID, r.Revision, err)
	}
	if running {
		return locked(r)
	}
	_, err = m.Finish(ctx, FinishInput{Key: backend.KeyOf(r), Phase: engine.PhaseFailed, Error: fmt.Sprintf("abandoned: run %s ended before finishing the release", r.RunID)})
	return err
}

// SetPhase records that a running release moved on (e.g. previewing -> applying),
// and the people the run recorded so far (added to the release's). Setting the
// phase it already has, with no one new, changes nothing; a finished release
// refuses (ErrFinal).
func (m *Manager) SetPhase(ctx context.Context, key backend.ReleaseKey, phase engine.Phase, people engine.People) error {
	r, err := m.backend.GetRelease(ctx, key.Project, key.Workspace, key.Revision)
	if err != nil {
		return err
	}
	merged := r.People.Merge(people)
	if r.Phase == phase && reflect.DeepEqual(merged, r.People) {
		return nil
	}
	if r.Phase.Final() {
		return kindf(ErrFinal, "revision %d is already %s", r.Revision, r.Phase)
	}
	r.Phase, r.People = phase, merged
	r.ModifyTime = time.Now().UTC()
	return m.backend.UpdateRelease(ctx, r)
}

// Record stores one resource's outcome in an unfinished release: the resource
// as it is now, or a tombstone. Recording an entry again replaces it.
func (m *Manager) Record(ctx context.Context, key backend.ReleaseKey, e backend.StateEntry) error {
	return m.backend.PutStateEntry(ctx, key, e)
}

// Latest returns the newest release of project+workspace (ErrNoRelease when
// there is none).
func (m *Manager) Latest(ctx context.Context, project, workspace string) (*engine.Release, error) {
	r, err := m.backend.LatestRelease(ctx, project, workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, kindf(ErrNoRelease, "%s/%s has no releases yet", project, workspace)
	}
	return r, err
}

// LatestFinal returns the newest finished revision (0: none), the state a
// preview compares against while an apply may be running.
func (m *Manager) LatestFinal(ctx context.Context, project, workspace string) (int, error) {
	latest, err := m.backend.LatestRelease(ctx, project, workspace)
	if errors.Is(err, backend.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for rev := latest.Revision; rev > 0; rev-- {
		r := latest
		if rev != latest.Revision {
			if r, err = m.backend.GetRelease(ctx, project, workspace, rev); err != nil {
				return 0, err
			}
		}
		if r.Phase.Final() {
			return rev, nil
		}
	}
	return 0, nil
}

// versionFree refuses a version name (apply --version) another release of
// the stack already has: rollback --version finds a release by it.
func (m *Manager) versionFree(ctx context.Context, project, workspace, version string) error {
	if version == "" {
		return nil
	}
	releases, err := m.backend.ListReleaseSummaries(ctx, project, workspace)
	if err != nil {
		return err
	}
	for _, sum := range releases {
		if r := sum.Release; r.Label.Version == version {
			return kindf(ErrInvalid, "--version %s: revision %d of %s/%s already has it; name this release otherwise", version, r.Revision, project, workspace)
		}
	}
	return nil
}

// RevisionOfVersion is the revision of project+workspace named version
// (apply --version); ErrNoTarget when none is.
func (m *Manager) RevisionOfVersion(ctx context.Context, project, workspace, version string) (int, error) {
	releases, err := m.backend.ListReleaseSummaries(ctx, project, workspace)
	if err != nil {
		return 0, err
	}
	for _, sum := range releases {
		if r := sum.Release; r.Label.Version == version {
			return r.Revision, nil
		}
	}
	return 0, kindf(ErrNoTarget, "no release of %s/%s is named %s (release list shows their versions)", project, workspace, version)
}

// readSpecAhead reads the spec of hash into m.specs while the workspace and
// the latest release are read: the move check, the plan and the preview read
// it next. The channel closes once it is read (or failed: its error is the
// next reader's).
func (m *Manager) readSpecAhead(ctx context.Context, hash string) <-chan struct{} {
	read := make(chan struct{})
	if hash == "" {
		close(read)
		return read
	}
	go func() {
		defer close(read)
		_, _ = m.spec(ctx, hash)
	}()
	return read
}
