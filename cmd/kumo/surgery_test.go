package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/internal/terraformtest"
)

// recordedIDs returns the IDs revision rev's state records.
func (e *env) recordedIDs(rev int) map[string]bool {
	e.t.Helper()
	var rel struct {
		Surgery *struct {
			Forget []string `json:"forget"`
		} `json:"surgery"`
		State struct {
			Resources []struct {
				ID string `json:"id"`
			} `json:"resources"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(e.ok("release", "show", "--revision", fmt.Sprint(rev), "-o", "json").stdout), &rel); err != nil {
		e.t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range rel.State.Resources {
		ids[r.ID] = true
	}
	return ids
}

// TestReleaseForget: a forgotten ConfigMap leaves the record and stays live;
// an apply of a spec without it then does not delete it. Refusals name the
// ID and the revision; without --yes the forget waits for approval, and a
// declined one records nothing.
func TestReleaseForget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := "v1:ConfigMap:"+e.ns+":a", "v1:ConfigMap:"+e.ns+":b"
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", versioned(e.ns, "a", "1", "b", "1")))

	e.fails([]string{"release", "forget", "--yes", "v1:ConfigMap:" + e.ns + ":zzz"},
		"forget: v1:ConfigMap:"+e.ns+":zzz not recorded in revision 1 of "+e.project+"/default")
	e.fails([]string{"release", "forget", "--yes"}, "name the resource IDs to forget")
	e.fails([]string{"release", "mv", "--yes", a, b}, "mv "+a+" "+b+": "+b+" already exists in revision 1")
	e.fails([]string{"release", "mv", "--yes", a, "v1:ConfigMap:" + e.ns + ":c"}, "a Kubernetes object cannot be renamed")
	e.fails([]string{"release", "mv", "--yes", a}, "want two resource IDs")

	declined := e.run("release", "forget", b)
	if declined.code == 0 || !strings.Contains(declined.stdout, "Forget") {
		t.Fatalf("a forget without --yes and no answer: %s", declined)
	}
	if !e.recordedIDs(len(e.releaseInfos()))[b] {
		t.Fatal("a declined forget dropped b from the record")
	}

	r := e.ok("release", "forget", "--yes", "--message", "handed to team B", b)
	if !strings.Contains(r.stdout, "Forget") || !strings.Contains(r.stdout, "1 to forget") || !strings.Contains(r.stdout, "1 forgotten (left live)") {
		t.Errorf("forget output:\n%s", r.stdout)
	}
	rows := e.releaseInfos()
	last := rows[len(rows)-1]
	if last.Operation != "forget" || last.Phase != "succeeded" {
		t.Fatalf("releases = %+v, want a succeeded forget last", rows)
	}
	if ids := e.recordedIDs(last.Revision); ids[b] || !ids[a] {
		t.Errorf("revision %d records %v, want a and not b", last.Revision, ids)
	}
	if got := e.configMapData(); got["b"] != "1" {
		t.Fatalf("forget changed the cluster: %v", got)
	}

	onlyA := e.writeSpec("v2.yaml", versioned(e.ns, "a", "2"))
	if c, ok := e.preview(onlyA)[b]; ok {
		t.Errorf("after forget, a preview without b plans %+v for it", c)
	}
	applied := e.ok("apply", "--yes", "-f", onlyA)
	if strings.Contains(applied.stdout, "delete "+b) {
		t.Errorf("the apply deleted the forgotten b:\n%s", applied.stdout)
	}
	if got := e.configMapData(); got["a"] != "2" || got["b"] != "1" {
		t.Errorf("after an apply without b: %v, want a updated and b left live", got)
	}
	runs := e.ok("run", "list").stdout
	if !strings.Contains(runs, "forget") {
		t.Errorf("run list does not show the forget run:\n%s", runs)
	}
}

// applyHPA applies hpaSpec in autoscaling/v1 and returns the HPA's IDs in
// autoscaling/v1 and v2.
func (e *env) applyHPA() (v1, v2 string) {
	e.t.Helper()
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", hpaSpec(e.ns, "autoscaling/v1")))
	return "autoscaling/v1:HorizontalPodAutoscaler:" + e.ns + ":web", "autoscaling/v2:HorizontalPodAutoscaler:" + e.ns + ":web"
}

// hpaUID is the live HPA's UID.
func (e *env) hpaUID() types.UID {
	e.t.Helper()
	hpa, err := e.kube.AutoscalingV2().HorizontalPodAutoscalers(e.ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return hpa.UID
}

// hpaSpec is a Namespace and a HorizontalPodAutoscaler web in apiVersion av
// (done once applied: no Deployment for it to scale).
func hpaSpec(ns, av string) string {
	return "resources:\n" + namespace(ns) + fmt.Sprintf(`- id: %[2]s:HorizontalPodAutoscaler:%[1]s:web
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  extensions: {kumoproj.io/wait: applied}
  attributes:
    apiVersion: %[2]s
    kind: HorizontalPodAutoscaler
    metadata: {name: web, namespace: %[1]s}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      minReplicas: 1
      maxReplicas: 3
`, ns, av)
}

// TestReleaseMove: moving to a new apiVersion an HPA recorded under the old
// one, then applying the spec that uses the new one, deletes and creates
// nothing: the object keeps its UID. Without the move the plan deletes the
// old ID, which is the same object.
func TestReleaseMove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v1, v2 := e.applyHPA()
	before := e.hpaUID()
	spec2 := e.writeSpec("v2.yaml", hpaSpec(e.ns, "autoscaling/v2"))
	if c := e.preview(spec2)[v1]; c.Action != "Delete" {
		t.Fatalf("without a move the plan for %s is %+v; want the Delete the move avoids", v1, c)
	}

	e.fails([]string{"release", "mv", "--yes", v2, v1}, "mv "+v2+" "+v1+": "+v2+" is not recorded in revision 1")
	r := e.ok("release", "mv", "--yes", v1, v2)
	if !strings.Contains(r.stdout, "Move") || !strings.Contains(r.stdout, "(moved from "+v1) || !strings.Contains(r.stdout, "1 moved") {
		t.Errorf("mv output:\n%s", r.stdout)
	}
	rows := e.releaseInfos()
	if len(rows) != 2 || rows[1].Operation != "move" || rows[1].Phase != "succeeded" {
		t.Fatalf("releases = %+v, want a succeeded move", rows)
	}
	if ids := e.recordedIDs(2); !ids[v2] || ids[v1] {
		t.Errorf("revision 2 records %v, want %s instead of %s", ids, v2, v1)
	}
	for id, c := range e.preview(spec2) {
		if c.Action == "Create" || c.Action == "Delete" {
			t.Errorf("after the move the plan has %s %s", c.Action, id)
		}
	}
	e.ok("apply", "--yes", "-f", spec2)
	if after := e.hpaUID(); after != before {
		t.Errorf("the HPA was re-created: uid %s, was %s", after, before)
	}
	e.fails([]string{"release", "mv", "--yes", v2, v2}, "the two IDs are the same")
}

// TestReleaseMoveTerraform: a terraform_data renamed (as a renamed generator
// component renames it) and moved applies as unchanged: its recorded state
// moved to the new address, terraform plans no replacement and the id it
// generated at create stays. Without the move the plan deletes the old name
// and creates the new one.
func TestReleaseMoveTerraform(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	oldID, newID := "builtin:terraform:terraform_data:old", "builtin:terraform:terraform_data:renamed"
	spec := func(id string) string {
		return e.writeSpec("spec.yaml", fmt.Sprintf(`resources:
- id: %s
  type: Terraform
  attributes: {input: kept}
  extensions: {provider: %s, resourceType: terraform_data}
`, id, terraformtest.BuiltinProvider))
	}
	e.ok("apply", "--yes", "-f", spec(oldID))
	recordedID := func(rev int, id string) string {
		attrs, _ := stateResource(e.release(rev), id)["attributes"].(map[string]any)
		s, _ := attrs["id"].(string)
		return s
	}
	created := recordedID(1, oldID)
	if created == "" {
		t.Fatal("revision 1 does not record the terraform_data's id")
	}
	renamed := spec(newID)
	if p := e.preview(renamed); p[oldID].Action != "Delete" || p[newID].Action != "Create" {
		t.Fatalf("without a move: %+v, want the delete and create the move avoids", p)
	}
	e.fails([]string{"release", "mv", "--yes", oldID, "hashicorp:local:local_file:old"}, "not the same kind of Terraform resource")
	e.ok("release", "mv", "--yes", oldID, newID)
	if got := recordedID(2, newID); got != created {
		t.Fatalf("revision 2 records %s with id %q, want %q", newID, got, created)
	}
	if p := e.preview(renamed); len(p) != 1 || p[newID].Action != "UnChanged" {
		t.Errorf("after the move: %+v, want %s unchanged alone", p, newID)
	}
	e.ok("apply", "--yes", "-f", renamed)
	if got := recordedID(3, newID); got != created {
		t.Errorf("after the apply %s has id %q, want %q (re-created)", newID, got, created)
	}
}

// TestMovedInTheSpec: a spec whose moved: says the HPA recorded under
// autoscaling/v1 is now autoscaling/v2 applies with no Delete or Create: the
// apply records the move as revision 2 (operation move) and applies from it
// as revision 3, and the HPA keeps its UID. Applied again, the entry has
// nothing left to move. An entry whose From the spec still declares is
// refused before anything runs.
func TestMovedInTheSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v1, v2 := e.applyHPA()
	before := e.hpaUID()
	moved := e.writeSpec("v2.yaml", hpaSpec(e.ns, "autoscaling/v2")+fmt.Sprintf("moved:\n- {from: %q, to: %q}\n", v1, v2))
	applied := e.ok("apply", "--yes", "-f", moved)
	if strings.Contains(applied.stdout, "Delete") || strings.Contains(applied.stdout, "Create") {
		t.Errorf("the apply with moved: deletes or creates:\n%s", applied.stdout)
	}
	rows := e.releaseInfos()
	if len(rows) != 3 || rows[1].Operation != "move" || rows[1].Phase != "succeeded" || rows[2].Operation != "apply" || rows[2].Phase != "succeeded" {
		t.Fatalf("releases = %+v, want apply, a succeeded move, apply", rows)
	}
	if ids := e.recordedIDs(3); !ids[v2] || ids[v1] {
		t.Errorf("revision 3 records %v, want %s instead of %s", ids, v2, v1)
	}
	if after := e.hpaUID(); after != before {
		t.Errorf("the HPA was re-created: uid %s, was %s", after, before)
	}
	e.ok("apply", "--yes", "-f", moved)
	if rows := e.releaseInfos(); len(rows) != 4 || rows[3].Operation != "apply" {
		t.Errorf("applied again: releases %+v, want one more apply and no move", rows)
	}
	both := e.writeSpec("both.yaml", hpaSpec(e.ns, "autoscaling/v2")+fmt.Sprintf("moved:\n- {from: %q, to: %q}\n", v2, v1))
	e.fails([]string{"apply", "--yes", "-f", both}, "moved[0] (from "+v2+" to "+v1+"): the spec still declares "+v2)
}
