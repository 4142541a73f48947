package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine/drift"
)

// TestDriftScheduleCommands: `kumo drift schedule` refuses a one-shot kumo;
// with kumo server it creates the schedule (a second create is an error
// unless --update), a triggered remediate-mode check reports the field and
// manager another field manager changed and puts it back as revision 2
// (operation remediate), and describe, list, pause and delete behave.
func TestDriftScheduleCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.ok("apply", "--yes", "-f", e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "c", "dependsOn: [v1:Namespace:"+e.ns+"]")))
	e.fails([]string{"drift", "schedule", "create"}, "drift schedules need a Temporal that keeps running", "kumo server --home")

	e.startServer()
	id := "kumo-drift/" + e.project + "/default"
	if out := e.ok("drift", "schedule", "create", "--every", "1h"); !strings.Contains(out.stdout, id) || !strings.Contains(out.stdout, "every 1h0m0s") || !strings.Contains(out.stdout, "mode      warn") {
		t.Errorf("create:\n%s", out.stdout)
	}
	e.fails([]string{"drift", "schedule", "create"}, "drift schedule "+id+" exists: pass --update")
	e.fails([]string{"drift", "schedule", "update", "--every", "30s"}, "the shortest interval is 1m0s")
	e.ok("drift", "schedule", "create", "--update", "--every", "2h", "--mode", "remediate")

	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"k":"edited"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	r := e.run("drift", "schedule", "trigger", "-o", "json")
	var rep drift.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 2 {
		t.Fatalf("trigger: %v\n%s", err, r)
	}
	if len(rep.Resources) != 1 || describeResult(rep.Resources[0]) != `drifted [/data/k "v" -> "edited" by kubectl-edit]` {
		t.Errorf("triggered check: %+v", rep.Resources)
	}
	if st := rep.Remediation; st == nil || st.Outcome != drift.OutcomeSucceeded || st.Revision != 2 {
		t.Fatalf("remediation: %+v", rep.Remediation)
	}
	if rows := e.releases(); len(rows) != 2 || rows[1].Operation != "remediate" || rows[1].Phase != "succeeded" {
		t.Errorf("releases after the remediation: %+v", rows)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "c", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Errorf("ConfigMap after the remediation: %v, %v", cm.Data, err)
	}

	var s client.DriftSchedule
	if err := json.Unmarshal([]byte(e.ok("drift", "schedule", "describe", "-o", "json").stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.Every != "2h0m0s" || s.Mode != drift.ModeRemediate || s.LastReport == nil || s.LastReport.RunID != rep.RunID || len(s.Recent) != 1 {
		t.Errorf("describe: %+v", s)
	}
	e.ok("drift", "schedule", "pause", "--note", "freeze")
	if out := e.ok("drift", "schedule", "describe"); !strings.Contains(out.stdout, "paused (freeze)") {
		t.Errorf("describe after pause:\n%s", out.stdout)
	}
	if out := e.ok("drift", "schedule", "list"); !strings.Contains(out.stdout, id) || !strings.Contains(out.stdout, "paused") {
		t.Errorf("list:\n%s", out.stdout)
	}
	e.ok("drift", "schedule", "delete")
	e.fails([]string{"drift", "schedule", "describe"}, "no drift schedule "+id)
}
