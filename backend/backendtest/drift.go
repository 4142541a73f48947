package backendtest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/drift"
)

func driftReport(project, workspace string, n int) *drift.Report {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(n) * time.Hour)
	r := &drift.Report{Project: project, Workspace: workspace, Stack: "base", CheckTime: at, RunID: fmt.Sprintf("run-%d", n), Revision: 7}
	r.Add(drift.Result{ID: "v1:ConfigMap:demo:c", Type: "Kubernetes", Status: drift.Drifted, FirstSeen: at, ConsecutiveChecks: n,
		Fields: []drift.Field{{Path: "/data/color", Recorded: "blue", Live: "red", Manager: "kubectl-edit"}},
		Ignored: []drift.Field{{Path: "/spec/replicas", Recorded: int64(2), Live: int64(5), Manager: "kubectl-scale", IgnoredBy: "drift.ignore[0]"},
			{Path: "/x", Recorded: 1.5, Live: map[string]any{"a": []any{int64(1)}}}}})
	r.Add(drift.Result{ID: "v1:Service:demo:web", Type: "Kubernetes", Status: drift.Missing, FirstSeen: at, ConsecutiveChecks: 1})
	r.Add(drift.Result{ID: "v1:Namespace:demo", Type: "Kubernetes", Status: drift.InSync})
	return r
}

// testDriftReports: reports round-trip exactly (numbers keep their types), the
// latest is the newest check, one is found by its run, each stack keeps its
// own, and a put prunes to the newest keep.
func testDriftReports(t *testing.T, b backend.Backend) {
	if _, err := b.DriftReport(ctx, "shop", "dev", ""); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("latest report of a stack without any: %v, want ErrNotFound", err)
	}
	for n := 1; n <= 4; n++ {
		if err := b.PutDriftReport(ctx, driftReport("shop", "dev", n), 3); err != nil {
			t.Fatalf("PutDriftReport %d: %v", n, err)
		}
	}
	if err := b.PutDriftReport(ctx, driftReport("shop", "prod", 9), 0); err != nil {
		t.Fatal(err)
	}
	latest, err := b.DriftReport(ctx, "shop", "dev", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := driftReport("shop", "dev", 4); !reflect.DeepEqual(latest, want) {
		t.Errorf("latest report:\n got  %#v\n want %#v", latest, want)
	}
	second, err := b.DriftReport(ctx, "shop", "dev", "run-2")
	if err != nil || second.RunID != "run-2" || !second.CheckTime.Equal(driftReport("shop", "dev", 2).CheckTime) {
		t.Errorf("report of run-2: %+v, %v", second, err)
	}
	if _, err := b.DriftReport(ctx, "shop", "dev", "run-1"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("report of run-1, pruned (keep 3): %v, want ErrNotFound", err)
	}
	all, err := b.DriftReports(ctx, "shop", "dev")
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, r := range all {
		runs = append(runs, r.RunID)
	}
	if fmt.Sprint(runs) != "[run-2 run-3 run-4]" {
		t.Errorf("stored reports %v, want [run-2 run-3 run-4]", runs)
	}
	if r, err := b.DriftReport(ctx, "shop", "prod", ""); err != nil || r.RunID != "run-9" {
		t.Errorf("prod's report: %+v, %v", r, err)
	}
	bad := driftReport("shop", "dev", 5)
	bad.RunID = "../x"
	if err := b.PutDriftReport(ctx, bad, 0); !errors.Is(err, backend.ErrInvalidName) {
		t.Errorf("a report with run ID ../x: %v, want ErrInvalidName", err)
	}
}
