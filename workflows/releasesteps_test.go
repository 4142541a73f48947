package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// releaseActivities are the release lifecycle's steps (releaseSteps).
var releaseActivities = []string{activities.CreateReleaseActivity, activities.PlanPageActivity,
	activities.SetReleasePhaseActivity, activities.FinishReleaseActivity}

// TestReleaseStepsAreLocal: an apply and a destroy run their release steps
// (create, plan, the phase before the walk, finish) as local activities, in
// that order and summarised as before, and the releases they record are what
// ordinary steps recorded. The phase before a walk that changes something,
// the previews having been local in the same workflow task as the release's
// creation, keeps them in the backend (phaseSteps), and the finish clears
// them. A plan larger than localFinishMax finishes with an ordinary
// activity.
func TestReleaseStepsAreLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t)
	tc := startWorker(t, h.acts)

	ns := nsResource()
	spec := &engine.Spec{Resources: []engine.Resource{ns, cm("a", ns.ID), cm("b", ns.ID)}}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	run := func(workflow, spec string) []*historypb.HistoryEvent {
		t.Helper()
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, workflow,
			runspec.RunInput{Project: "p", Workspace: "w", SpecHash: spec, AutoApprove: true, Parallelism: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := wr.Get(ctx, nil); err != nil {
			t.Fatalf("%s: %v", workflow, err)
		}
		return history(ctx, t, tc, wr)
	}
	check := func(what string, events []*historypb.HistoryEvent, local, ordinary []string) {
		t.Helper()
		var steps []string
		for _, s := range localSummaries(t, events) {
			switch s {
			case "create release", "plan", "applying", "destroying", "finish release":
				steps = append(steps, s)
			}
		}
		if !slices.Equal(steps, local) {
			t.Errorf("%s: local release steps %v, want %v", what, steps, local)
		}
		var started []string
		for _, a := range startedActivities(events) {
			if slices.Contains(releaseActivities, a) {
				started = append(started, a)
			}
		}
		if !slices.Equal(started, ordinary) {
			t.Errorf("%s: release steps run as ordinary activities %v, want %v", what, started, ordinary)
		}
	}

	kept := func(rev int) {
		t.Helper()
		key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: rev}
		if _, ok, err := h.backend.GetPreview(ctx, key); ok || err != nil {
			t.Errorf("revision %d: previews still kept after its finish (%v)", rev, err)
		}
	}
	applying := []string{"create release", "plan", "applying", "finish release"}
	check("apply", run(runspec.ApplyWorkflow, hash), applying, nil)
	kept(1)
	check("re-apply", run(runspec.ApplyWorkflow, hash), applying, nil)
	check("destroy", run(runspec.DestroyWorkflow, ""), []string{"create release", "plan", "destroying", "finish release"}, nil)
	kept(3)

	defer func(max int) { localFinishMax = max }(localFinishMax)
	localFinishMax = len(spec.Resources) - 1
	check("apply over localFinishMax", run(runspec.ApplyWorkflow, hash), []string{"create release", "plan", "applying"},
		[]string{activities.FinishReleaseActivity})
	kept(4)

	for rev, want := range map[int]int{1: 3, 2: 3, 3: 0, 4: 3} {
		rel, err := h.backend.GetRelease(ctx, "p", "w", rev)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Phase != engine.PhaseSucceeded || len(rel.State.Resources) != want {
			t.Errorf("release %d: %s %s, %d resources, want succeeded with %d", rev, rel.Phase, rel.Error, len(rel.State.Resources), want)
		}
	}
}

// localSummaries are the summaries of every local activity, in the order
// history recorded them.
func localSummaries(t *testing.T, events []*historypb.HistoryEvent) []string {
	t.Helper()
	var summaries []string
	for _, e := range events {
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "LocalActivity" {
			continue
		}
		var summary string
		if err := converter.GetDefaultDataConverter().FromPayload(e.GetUserMetadata().GetSummary(), &summary); err != nil {
			t.Fatalf("local step without a summary: %v", err)
		}
		summaries = append(summaries, summary)
	}
	return summaries
}

// batchRuns runs applies and destroys of a Namespace and 30 ConfigMaps in
// it, and counts how their batches ran.
type batchRuns struct {
	t    *testing.T
	ctx  context.Context
	h    *harness
	tc   client.Client
	spec *engine.Spec
	hash string
}

func newBatchRuns(t *testing.T) *batchRuns {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	h := newHarness(t)
	ns := nsResource()
	spec := &engine.Spec{Resources: []engine.Resource{ns}}
	for i := range 30 {
		spec.Resources = append(spec.Resources, cm(fmt.Sprintf("c%02d", i), ns.ID))
	}
	hash, err := h.backend.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return &batchRuns{t: t, ctx: ctx, h: h, tc: startWorker(t, h.acts), spec: spec, hash: hash}
}

// events runs workflow (an apply of the spec, or a destroy) auto-approved
// and returns its history.
func (b *batchRuns) events(workflow string) []*historypb.HistoryEvent {
	b.t.Helper()
	hash := b.hash
	if workflow == runspec.DestroyWorkflow {
		hash = ""
	}
	wr, err := b.tc.ExecuteWorkflow(b.ctx, client.StartWorkflowOptions{ID: runspec.MutatingWorkflowID("p", "w"), TaskQueue: runspec.TaskQueue}, workflow,
		runspec.RunInput{Project: "p", Workspace: "w", SpecHash: hash, AutoApprove: true, Parallelism: 10})
	if err != nil {
		b.t.Fatal(err)
	}
	if err := wr.Get(b.ctx, nil); err != nil {
		b.t.Fatalf("%s: %v", workflow, err)
	}
	return history(b.ctx, b.t, b.tc, wr)
}

// run runs workflow as events does and counts its batches of verb
// ("preview", "apply", "delete") that were local steps and the activities
// of type batch it started.
func (b *batchRuns) run(workflow, verb, batch string) (local, ordinary int) {
	b.t.Helper()
	events := b.events(workflow)
	for _, s := range localSummaries(b.t, events) {
		if strings.HasPrefix(s, verb+" ") && strings.Contains(s, " resources: ") {
			local++
		}
	}
	return local, count(startedActivities(events), batch)
}

// releases checks that releases 1 to len(want) succeeded, recording want[i-1]
// resources.
func (b *batchRuns) releases(want ...int) {
	b.t.Helper()
	for i, n := range want {
		rel, err := b.h.backend.GetRelease(b.ctx, "p", "w", i+1)
		if err != nil {
			b.t.Fatal(err)
		}
		if rel.Phase != engine.PhaseSucceeded || len(rel.State.Resources) != n {
			b.t.Errorf("release %d: %s %s, %d resources, want succeeded with %d", i+1, rel.Phase, rel.Error, len(rel.State.Resources), n)
		}
	}
}

// TestPreviewBatchesAreLocal: a run with no runtime queue previews in
// batches that are local activities, side by side (no PreviewResources
// activity goes through the task queue), and the apply records the same
// release; a plan over localPreviewMax previews in ordinary activities.
func TestPreviewBatchesAreLocal(t *testing.T) {
	b := newBatchRuns(t)
	if local, ordinary := b.run(runspec.ApplyWorkflow, "preview", activities.PreviewResourcesActivity); local < 2 || ordinary != 0 {
		t.Errorf("preview of 31 resources: %d local batches and %d PreviewResources activities, want several local batches only", local, ordinary)
	}
	defer func(max int) { localPreviewMax = max }(localPreviewMax)
	localPreviewMax = len(b.spec.Resources) - 1
	if local, ordinary := b.run(runspec.ApplyWorkflow, "preview", activities.PreviewResourcesActivity); local != 0 || ordinary < 2 {
		t.Errorf("preview over localPreviewMax: %d local batches and %d PreviewResources activities, want ordinary ones only", local, ordinary)
	}
	b.releases(len(b.spec.Resources), len(b.spec.Resources))
}

// TestBatchesAreLocal: a run with no runtime queue and a plan of up to
// localBatchMax resources applies and destroys its ConfigMaps in one pool
// that is a local step (no ApplyResources or DeleteResources goes through
// the task queue), recording the same releases; a plan over localBatchMax
// uses ordinary batch activities, several.
func TestBatchesAreLocal(t *testing.T) {
	b := newBatchRuns(t)
	n := len(b.spec.Resources)
	if localBatchMax < n {
		t.Fatalf("localBatchMax %d: a plan of %d resources must have local batches", localBatchMax, n)
	}
	for _, max := range []int{localBatchMax, n - 1} {
		withLocalBatchMax(t, max)
		wantLocal := max >= n
		for _, c := range []struct{ workflow, verb, batch string }{
			{runspec.ApplyWorkflow, "apply", activities.ApplyResourcesActivity},
			{runspec.DestroyWorkflow, "delete", activities.DeleteResourcesActivity},
		} {
			local, ordinary := b.run(c.workflow, c.verb, c.batch)
			if wantLocal && (local != 1 || ordinary != 0) || !wantLocal && (local != 0 || ordinary < 2) {
				t.Errorf("%s of %d resources, localBatchMax %d: %d local batches and %d %s activities, want %s",
					c.workflow, n, max, local, ordinary, c.batch, map[bool]string{true: "one local pool only", false: "several activities only"}[wantLocal])
			}
		}
	}
	b.releases(n, 0, n, 0)
}

// TestRunsRecordOneVersionMarker: a run records shapeChange's marker alone,
// not one (and a search attribute upsert) per change it takes: an apply that
// previews, walks in local batches and finishes reaches most of them.
func TestRunsRecordOneVersionMarker(t *testing.T) {
	b := newBatchRuns(t)
	var markers []string
	for _, e := range b.events(runspec.ApplyWorkflow) {
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		var id string
		if err := converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["change-id"], &id); err != nil {
			t.Fatal(err)
		}
		markers = append(markers, id)
	}
	if !slices.Equal(markers, []string{shapeChange}) {
		t.Errorf("version markers %v, want %s's alone", markers, shapeChange)
	}
}
