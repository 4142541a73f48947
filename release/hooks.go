package release

// This file runs a spec's hooks (engine.Hook) at one point of a run: create,
// wait until done, delete as their policies say. Hooks are not resources of
// the release: nothing here writes state; what ran is returned, for the
// release to record (FinishInput.Hooks).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// HookInput asks for the hooks of one point of a run.
type HookInput struct {
	Key backend.ReleaseKey
	// SpecHash is the run's spec; a destroy (Operation) runs the hooks of
	// the prior release's spec (PriorRevision), the one it deletes.
	SpecHash      string
	PriorRevision int
	Operation     engine.Operation
	Point         engine.HookPoint
	// Run names the run (workflow and run ID): with the point and the hook,
	// it labels each object created, so a retry finds it.
	Run      string
	Settings runspec.RuntimeSettings
	// Timeout bounds each hook's wait (0: engine.DefaultWaitTimeout).
	Timeout time.Duration
}

// HookResult is what ran: every hook started, in order, and, when one
// failed, why (the hooks after it did not run).
type HookResult struct {
	Runs  []engine.HookRun `json:"runs,omitempty"`
	Error string           `json:"error,omitempty"`
}

// PlanHooks returns how many hooks the run of a plan may run: those of its
// spec and of the prior release's spec (whose hooks a destroy runs). Zero
// costs a run no hook step at all.
func (m *Manager) PlanHooks(ctx context.Context, in PlanInput) (int, error) {
	n := 0
	if in.SpecHash != "" {
		spec, err := m.spec(ctx, in.SpecHash)
		if err != nil {
			return 0, err
		}
		n += len(spec.Hooks)
	}
	prior, err := m.priorRelease(ctx, in.Project, in.Workspace, in.PriorRevision)
	if err != nil {
		return 0, err
	}
	if prior != nil && prior.SpecHash != "" {
		spec, err := m.spec(ctx, prior.SpecHash)
		if err != nil {
			return 0, err
		}
		n += len(spec.Hooks)
	}
	return n, nil
}

func (m *Manager) hooksOf(ctx context.Context, in HookInput) ([]engine.Hook, error) {
	hash := in.SpecHash
	if in.Operation == engine.OperationDestroy {
		prior, err := m.priorRelease(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
		if err != nil || prior == nil {
			return nil, err
		}
		hash = prior.SpecHash
	}
	if hash == "" {
		return nil, nil
	}
	spec, err := m.spec(ctx, hash)
	if err != nil {
		return nil, err
	}
	return spec.Hooks, nil
}

// upgrade reports whether the run of key is an upgrade, as Helm has it: the
// stack has a release that succeeded since its last destroy (Helm's
// uninstall removes the release, so the next install is one again).
func (m *Manager) upgrade(ctx context.Context, key backend.ReleaseKey) (bool, error) {
	rels, err := m.backend.ListReleaseSummaries(ctx, key.Project, key.Workspace)
	if err != nil {
		return false, err
	}
	for i := len(rels) - 1; i >= 0; i-- {
		r := rels[i].Release
		if r.Revision >= key.Revision || r.Phase != engine.PhaseSucceeded {
			continue
		}
		switch r.Operation {
		case engine.OperationDestroy:
			return false, nil
		case engine.OperationApply, engine.OperationRollback, engine.OperationRemediate:
			return true, nil
		}
	}
	return false, nil
}

// RunHooks runs the hooks of in.Point, in order (engine.HooksAt): each
// group (Argo CD hooks of one wave, each Helm hook alone) is created, its
// objects waited for until done, then the next group. An object of the same
// name is deleted first when the hook's policy has BeforeHookCreation. When
// a hook fails, the rest do not run, the failed ones are deleted if their
// policy has HookFailed, and the result says why; once all succeeded, those
// whose policy has HookSucceeded are deleted, last first. A
// CustomResourceDefinition is never deleted, as Helm never deletes one.
// What cannot be done (the cluster unreachable) is an error to retry:
// objects created by an earlier attempt are found by their label.
func (m *Manager) RunHooks(ctx context.Context, in HookInput) (HookResult, error) {
	all, err := m.hooksOf(ctx, in)
	if err != nil || len(all) == 0 {
		return HookResult{}, err
	}
	upgrade := false
	if in.Operation == engine.OperationApply || in.Operation == engine.OperationRemediate {
		if upgrade, err = m.upgrade(ctx, in.Key); err != nil {
			return HookResult{}, err
		}
	}
	events := engine.HookEventsFor(in.Operation, in.Point, upgrade)
	hooks := engine.HooksAt(all, events)
	if len(hooks) == 0 {
		return HookResult{}, nil
	}
	rt, err := m.runtime(ctx, in.Key.Workspace, engine.Kubernetes, in.Settings)
	if err != nil {
		return HookResult{}, err
	}
	runner, ok := rt.(runtime.HookRunner)
	if !ok {
		return HookResult{}, kindf(ErrInvalid, "the Kubernetes runtime of workspace %s cannot run hooks", in.Key.Workspace)
	}
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = engine.DefaultWaitTimeout
	}
	var out HookResult
	var done []created // succeeded, in order, for HookSucceeded
	for _, group := range engine.HookGroups(hooks) {
		results := make([]created, len(group))
		var wg sync.WaitGroup
		for k, h := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[k] = m.runHook(ctx, runner, rt, in, h, events, timeout)
			}()
		}
		wg.Wait()
		var failed []string
		for _, c := range results {
			if c.err != nil {
				return HookResult{}, c.err // not the hook's fault: retry
			}
			out.Runs = append(out.Runs, c.run)
			if c.run.Outcome == engine.HookOutcomeFailed {
				failed = append(failed, c.run.Message)
			} else {
				done = append(done, c)
			}
		}
		if len(failed) > 0 {
			for _, c := range results {
				if c.run.Outcome == engine.HookOutcomeFailed && c.hook.Deletes(engine.HookFailed) {
					if err := m.deleteHook(ctx, rt, c, &out); err != nil {
						return HookResult{}, err
					}
				}
			}
			// As Helm: the hooks that succeeded before are still deleted by
			// their HookSucceeded policy.
			for i := len(done) - 1; i >= 0; i-- {
				if done[i].hook.Deletes(engine.HookSucceeded) {
					if err := m.deleteHook(ctx, rt, done[i], &out); err != nil {
						return HookResult{}, err
					}
				}
			}
			out.Error = fmt.Sprintf("%s hook failed: %s", in.Point, errors.Join(stringErrs(failed)...))
			return out, nil
		}
	}
	for i := len(done) - 1; i >= 0; i-- {
		if done[i].hook.Deletes(engine.HookSucceeded) {
			if err := m.deleteHook(ctx, rt, done[i], &out); err != nil {
				return HookResult{}, err
			}
		}
	}
	return out, nil
}

// created is one hook's object once it ran.
type created struct {
	hook engine.Hook
	obj  *engine.Resource
	run  engine.HookRun
	err  error // not the hook's failure: the step's, to retry
}

// runHook runs one hook: delete an object of its name (BeforeHookCreation),
// create, wait until done.
func (m *Manager) runHook(ctx context.Context, runner runtime.HookRunner, rt runtime.Runtime, in HookInput, h engine.Hook, events []engine.HookEvent, timeout time.Duration) created {
	c := created{hook: h, run: engine.HookRun{ID: h.ID, Point: in.Point, Event: eventOf(h, events)}}
	label := hookLabel(in, h)
	res := &engine.Resource{ID: h.ID, Type: engine.Kubernetes, Attributes: h.Attributes}
	if h.Deletes(engine.HookBeforeCreation) && h.Name() != "" && !generated(h) {
		live, err := rt.Read(ctx, res)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
		case err != nil:
			c.err = err
			return c
		case live != nil && labelOf(live) != label:
			if err := rt.Delete(ctx, live); err != nil {
				c.err = err
				return c
			}
		}
	}
	obj, err := runner.CreateHook(ctx, res, label)
	if err != nil {
		if runtime.IsPermanent(err) {
			c.run.Outcome, c.run.Message = engine.HookOutcomeFailed, err.Error()
			return c
		}
		c.err = err
		return c
	}
	c.obj, c.run.ID = obj, obj.ID
	if _, err := runner.WaitHookDone(ctx, obj, runtime.WaitOptions{Timeout: timeout}); err != nil {
		if !runtime.IsPermanent(err) {
			c.err = err
			return c
		}
		c.run.Outcome, c.run.Message = engine.HookOutcomeFailed, err.Error()
		return c
	}
	c.run.Outcome = engine.HookOutcomeSucceeded
	return c
}

// deleteHook deletes a hook's object (never a CRD) and marks its run so.
func (m *Manager) deleteHook(ctx context.Context, rt runtime.Runtime, c created, out *HookResult) error {
	if c.obj == nil || c.hook.Kind() == "CustomResourceDefinition" {
		return nil
	}
	if err := rt.Delete(ctx, c.obj); err != nil {
		return err
	}
	for i := range out.Runs {
		if out.Runs[i].ID == c.run.ID && out.Runs[i].Point == c.run.Point {
			out.Runs[i].Deleted = true
		}
	}
	return nil
}

func eventOf(h engine.Hook, events []engine.HookEvent) engine.HookEvent {
	for _, e := range h.Events {
		for _, w := range events {
			if e == w {
				return e
			}
		}
	}
	return ""
}

func generated(h engine.Hook) bool {
	meta, _ := h.Attributes["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	return name == ""
}

// hookLabel identifies one hook of one point of one run: a label value (63
// characters at most).
func hookLabel(in HookInput, h engine.Hook) string {
	sum := sha256.Sum256([]byte(in.Run + "\x00" + string(in.Point) + "\x00" + h.ID))
	return hex.EncodeToString(sum[:16])
}

func labelOf(res *engine.Resource) string {
	meta, _ := res.Attributes["metadata"].(map[string]any)
	l, _ := meta["labels"].(map[string]any)
	v, _ := l[runtime.HookRunLabel].(string)
	return v
}

func stringErrs(msgs []string) []error {
	out := make([]error, len(msgs))
	for i, m := range msgs {
		out[i] = errors.New(m)
	}
	return out
}

// RunTests runs the test hooks of the stack's latest release as helm test
// does (RunHooks at engine.HookPointTest): the latest release that
// succeeded, unless the stack was destroyed since. A stack without such a
// release is an error naming it.
func (m *Manager) RunTests(ctx context.Context, in runspec.TestInput, run string) (runspec.TestResult, error) {
	rels, err := m.backend.ListReleaseSummaries(ctx, in.Project, in.Workspace)
	if err != nil {
		return runspec.TestResult{}, err
	}
	var rel *engine.Release
	for i := len(rels) - 1; i >= 0 && rel == nil; i-- {
		if r := rels[i].Release; r.Phase == engine.PhaseSucceeded {
			rel = r
		}
	}
	switch {
	case rel == nil:
		return runspec.TestResult{}, kindf(ErrNoRelease, "nothing to test: %s/%s has no release that succeeded", in.Project, in.Workspace)
	case rel.Operation == engine.OperationDestroy:
		return runspec.TestResult{}, kindf(ErrNoRelease, "nothing to test: revision %d of %s/%s destroyed the stack", rel.Revision, in.Project, in.Workspace)
	}
	res, err := m.RunHooks(ctx, HookInput{Key: backend.ReleaseKey{Project: in.Project, Workspace: in.Workspace, Revision: rel.Revision},
		SpecHash: rel.SpecHash, Operation: rel.Operation, Point: engine.HookPointTest, Run: run, Settings: in.Settings, Timeout: in.Timeout})
	if err != nil {
		return runspec.TestResult{}, err
	}
	return runspec.TestResult{Revision: rel.Revision, Runs: res.Runs, Error: res.Error}, nil
}
