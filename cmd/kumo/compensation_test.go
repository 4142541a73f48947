package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// brokenAfter is a ConfigMap that fails at apply time, once all of deps are
// applied: it references a field that the resource created by this apply, named
// by the first dependency, does not have (the preview cannot know that yet).
func brokenAfter(ns string, deps ...string) string {
	return fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:broken
  type: Kubernetes
  dependsOn: [%[2]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: broken, namespace: %[1]s}
    data: {k: $kumo_path.%[3]s.data.nope}
`, ns, strings.Join(deps, ", "), deps[0])
}

// TestRollbackOnFailureUndoesTheApply: creates, an update and a delete, then a
// node fails: the cluster is back as before the apply, and the release says so.
func TestRollbackOnFailureUndoesTheApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", versioned(ns, "keep", "1", "upd", "1", "del", "1")))
	id := func(name string) string { return "v1:ConfigMap:" + ns + ":" + name }
	v2 := versioned(ns, "keep", "1", "upd", "2", "new1", "2", "new2", "2") + brokenAfter(ns, id("new1"), id("new2"), id("upd"), id("keep"))
	r := e.fails([]string{"apply", "--yes", "--rollback-on-failure", "-f", e.writeSpec("v2.yaml", v2)}, "data.nope")
	if !strings.Contains(r.stdout, "Compensation: 4 resources put back") {
		t.Errorf("apply output:\n%s", r.stdout)
	}
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"keep": "1", "upd": "1", "del": "1"}) {
		t.Errorf("cluster after compensation = %v, want as before the apply", got)
	}
	rel := e.release(2)
	comp, _ := rel["compensation"].(map[string]any)
	if rel["phase"] != "failed" || !strings.Contains(fmt.Sprint(rel["error"]), "data.nope") || len(comp["resources"].([]any)) != 4 || comp["errors"] != nil {
		t.Errorf("release 2: phase %v error %v compensation %v", rel["phase"], rel["error"], comp)
	}
	if table := e.ok("release", "list").stdout; !strings.Contains(table, "apply+compensate") {
		t.Errorf("release list does not show the compensation:\n%s", table)
	}
	state := stateVersions(rel)
	live := e.configMapData()
	if len(state) != len(live)+1 {
		t.Errorf("state %v does not match the cluster %v", state, live)
	}
	for name := range live {
		if _, ok := state[id(name)]; !ok {
			t.Errorf("state lacks %s", name)
		}
	}
}

// TestKilledWorkerDuringCompensation: a new worker finishes the undo.
func TestKilledWorkerDuringCompensation(t *testing.T) {
	t.Parallel()
	const n = 60
	e := newEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	w := e.worker()
	ns := e.ns
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", "resources:\n"+namespace(ns)+configMap(ns, "keep", "dependsOn: [v1:Namespace:"+ns+"]")))
	var cms []string
	var deps []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("c%02d", i)
		cms = append(cms, name, "2")
		deps = append(deps, "v1:ConfigMap:"+ns+":"+name)
	}
	spec := versioned(ns, cms...) + configMap(ns, "keep", "dependsOn: [v1:Namespace:"+ns+"]") + brokenAfter(ns, deps...)
	_, wait := e.background(nil, "apply", "--yes", "--rollback-on-failure", "--parallelism", "1", "-f", e.writeSpec("v2.yaml", spec))

	// The ConfigMaps come one by one with the apply and go once the
	// compensation removes them. A poll can miss the moment all n+1 are
	// there (the compensation starts within milliseconds of the last), so
	// the compensation is seen started once their count, having passed
	// half of n, has fallen by more than five from the most seen.
	most := 0
	waitFor(t, "the compensation to start", 2*time.Minute, func() bool {
		got := len(e.configMapNames())
		most = max(most, got)
		return most > n/2 && got < most-5
	})
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	left := len(e.configMapNames())
	e.worker()
	if r := wait(); r.code == 0 || !strings.Contains(r.stdout, fmt.Sprintf("Compensation: %d resources put back", n)) {
		t.Fatalf("apply: %s", r)
	}
	t.Logf("worker killed with %d ConfigMaps left to remove", left)
	if got := e.configMapNames(); len(got) != 1 || got[0] != "keep" {
		t.Errorf("ConfigMaps after compensation = %v, want only keep", got)
	}
	if rel := e.release(2); rel["phase"] != "failed" {
		t.Errorf("release 2 is %v", rel["phase"])
	}
}
