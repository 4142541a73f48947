package main

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/engine"
)

// check verifies the invariants after a trial: every release final, revisions
// 1..n without gaps and one per run, the last one ended as its operation should,
// and the ConfigMaps live are exactly the ones its state records, as recorded.
func (t *trial) check(ctx context.Context) {
	rels, err := t.store.ListReleases(ctx, t.project, "default")
	if err != nil {
		t.violation("list releases: %v", err)
		return
	}
	runIDs := map[string]int{}
	for i, r := range rels {
		if r.Revision != i+1 {
			t.violation("revisions are not 1..%d without gaps: %v", len(rels), revisions(rels))
			return
		}
		if !r.Phase.Final() {
			t.violation("revision %d is %s, not final", r.Revision, r.Phase)
		}
		if prev, ok := runIDs[r.RunID]; ok {
			t.violation("revisions %d and %d belong to the same run %s", prev, r.Revision, r.RunID)
		}
		runIDs[r.RunID] = r.Revision
	}
	if len(rels) != t.runs {
		t.violation("%d releases for %d runs", len(rels), t.runs)
		return
	}
	if len(rels) == 0 {
		return
	}
	last := rels[len(rels)-1]
	if t.runID != "" && last.RunID != t.runID {
		t.violation("the last revision %d belongs to run %s, not to the run under kills %s", last.Revision, last.RunID, t.runID)
	}
	t.checkOutcome(last, rels)
	t.checkLive(ctx, last)
}

func revisions(rels []*engine.Release) []int {
	var out []int
	for _, r := range rels {
		out = append(out, r.Revision)
	}
	return out
}

// checkOutcome: the operation ended as it would have without kills, and its
// state records what it should.
func (t *trial) checkOutcome(last *engine.Release, rels []*engine.Release) {
	wantPhase, want := engine.PhaseSucceeded, (*engine.Spec)(nil)
	switch t.op {
	case "apply":
		want = t.specs.v2
	case "destroy":
		want = &engine.Spec{}
	case "rollback":
		want = t.specs.v1
	case "compensation":
		wantPhase = engine.PhaseFailed
		if len(rels) >= 2 && rels[len(rels)-2].State != nil { // put back as it was before
			want = &engine.Spec{Resources: rels[len(rels)-2].State.Resources}
		}
	}
	t.logf("revision %d %s %s%s", last.Revision, last.Operation, last.Phase, compensated(last))
	if last.Phase != wantPhase {
		t.violation("revision %d is %s, want %s (error: %s)", last.Revision, last.Phase, wantPhase, last.Error)
	}
	if t.op == "compensation" && (last.Compensation == nil || len(last.Compensation.Errors) > 0) {
		t.violation("revision %d: compensation %+v, want every change undone without errors", last.Revision, last.Compensation)
	}
	if want == nil {
		return
	}
	got := map[string]any{}
	if last.State != nil {
		for _, r := range last.State.Resources {
			got[r.ID] = r.Attributes["data"]
		}
	}
	wantData := map[string]any{}
	for _, r := range want.Resources {
		wantData[r.ID] = r.Attributes["data"]
	}
	if !reflect.DeepEqual(got, wantData) {
		t.violation("revision %d records %d resources, want %d as the %s left them; differing: %v",
			last.Revision, len(got), len(wantData), t.op, differing(got, wantData))
	}
}

func compensated(r *engine.Release) string {
	if r.Compensation == nil {
		return ""
	}
	return fmt.Sprintf(" (compensation put back %d resources)", len(r.Compensation.Resources))
}

func differing(a, b map[string]any) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if !reflect.DeepEqual(a[id], b[id]) {
			out = append(out, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[id]; !ok {
			out = append(out, id)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return out
}

// checkLive: every ConfigMap in the trial's Namespace is recorded in the last
// release's state, and every recorded one is live as recorded (same
// resourceVersion, same data).
func (t *trial) checkLive(ctx context.Context, last *engine.Release) {
	recorded := map[string]engine.Resource{}
	if last.State != nil {
		for _, r := range last.State.Resources {
			recorded[r.ID] = r
		}
	}
	list, err := t.env.kube.CoreV1().ConfigMaps(t.project).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.violation("list ConfigMaps: %v", err)
		return
	}
	live := map[string]bool{}
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		id := engine.KubernetesID("v1", "ConfigMap", cm.Namespace, cm.Name)
		live[id] = true
		r, ok := recorded[id]
		if !ok {
			t.violation("%s is live but no release records it (left behind)", id)
			continue
		}
		meta, _ := r.Attributes["metadata"].(map[string]any)
		if rv, _ := meta["resourceVersion"].(string); rv != cm.ResourceVersion {
			t.violation("%s: recorded resourceVersion %q, live %q", id, rv, cm.ResourceVersion)
		}
		data := map[string]any{}
		for k, v := range cm.Data {
			data[k] = v
		}
		if !reflect.DeepEqual(r.Attributes["data"], data) {
			t.violation("%s: recorded data %v, live %v", id, r.Attributes["data"], data)
		}
	}
	for id := range recorded {
		if !live[id] {
			t.violation("%s is recorded in revision %d but not live", id, last.Revision)
		}
	}
}
