package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// configMaps is a spec of ConfigMaps in ns, each "name=value" or
// "name=value<-dep" (depends on ConfigMap dep), with extra annotations
// given as name -> "key: value".
func configMaps(ns string, annotations map[string]string, cms ...string) string {
	s := "resources:\n"
	for _, c := range cms {
		nv, dep, _ := strings.Cut(c, "<-")
		name, value, _ := strings.Cut(nv, "=")
		deps := ""
		if dep != "" {
			deps = fmt.Sprintf("  dependsOn: [v1:ConfigMap:%s:%s]\n", ns, dep)
		}
		ann := ""
		if a := annotations[name]; a != "" {
			ann = ", annotations: {" + a + "}"
		}
		s += fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:%[2]s
  type: Kubernetes
%[4]s  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %[2]s, namespace: %[1]s%[5]s}
    data: {v: "%[3]s"}
`, ns, name, value, deps, ann)
	}
	return s
}

// createNamespace makes e's namespace outside kumo, so the specs of a test
// hold only what it deletes.
func (e *env) createNamespace() {
	e.t.Helper()
	_, err := e.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

// TestTargetedApply: a targeted apply changes only its target (and what it
// depends on) and records a partial revision whose other records are the
// prior revision's; --target-dependents takes what depends on the target;
// a target that matches nothing is refused by name; a full apply converges.
func TestTargetedApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createNamespace()
	ns := e.ns
	id := func(name string) string { return "v1:ConfigMap:" + ns + ":" + name }
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", configMaps(ns, nil, "a=1", "b=1", "c=1<-a")))
	before := stateVersions(e.release(1))

	v2 := e.writeSpec("v2.yaml", configMaps(ns, nil, "a=2", "b=2", "c=2<-a", "d=2"))
	e.fails([]string{"apply", "--yes", "-f", v2, "--target", "ConfigMap/b", "--target", "Service/nope"}, "--target Service/nope: matches no resource")
	e.fails([]string{"apply", "--yes", "-f", v2, "--target", "web"}, `--target "web"`)

	// An exact ID: only b.
	out := e.ok("apply", "--yes", "-f", v2, "--target", id("b"))
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "1", "b": "2", "c": "1"}) {
		t.Fatalf("after --target b: %v, want only b changed\n%s", got, out.stdout)
	}
	rel := e.release(0)
	target, _ := rel["target"].(map[string]any)
	if fmt.Sprint(target["targets"]) != "["+id("b")+"]" {
		t.Errorf("release 2 target = %v, want [%s]", rel["target"], id("b"))
	}
	state := stateVersions(rel)
	for _, name := range []string{"a", "c"} {
		if state[id(name)] != before[id(name)] {
			t.Errorf("release 2 recorded %s at %s, want the prior record %s", name, state[id(name)], before[id(name)])
		}
	}
	if _, ok := state[id("d")]; ok || len(state) != 3 {
		t.Errorf("release 2 state %v: want a, b, c only", state)
	}
	if show := e.ok("run", "show", fmt.Sprint(rel["runID"])).stdout; !strings.Contains(show, id("b")) || !strings.Contains(show, "target") {
		t.Errorf("run show does not name the target:\n%s", show)
	}

	// kind/name of a dependent: its dependency comes along.
	e.ok("apply", "--yes", "-f", v2, "--target", "configmap/c")
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "2", "b": "2", "c": "2"}) {
		t.Fatalf("after --target configmap/c: %v, want a and c too", got)
	}

	// A glob with dependents: a and what depends on it (c), not b or d.
	v3 := e.writeSpec("v3.yaml", configMaps(ns, nil, "a=3", "b=3", "c=3<-a", "d=3"))
	e.ok("apply", "--yes", "-f", v3, "--target", "*:ConfigMap:"+ns+":a", "--target-dependents")
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "3", "b": "2", "c": "3"}) {
		t.Fatalf("after --target a --target-dependents: %v", got)
	}

	// A full apply converges, and then nothing is left to change.
	e.ok("apply", "--yes", "-f", v3)
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "3", "b": "3", "c": "3", "d": "3"}) {
		t.Fatalf("after the full apply: %v", got)
	}
	if rel := e.release(0); rel["target"] != nil || len(stateVersions(rel)) != 4 {
		t.Errorf("the full apply's release: target %v, state %v", rel["target"], stateVersions(rel))
	}
	if p := e.ok("preview", "-f", v3).stdout; !strings.Contains(p, "No changes") && !strings.Contains(p, "no changes") {
		t.Errorf("preview after converging:\n%s", p)
	}

	// A targeted destroy deletes the target and what depends on it.
	e.ok("destroy", "--yes", "--target", "ConfigMap/a")
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"b": "3", "d": "3"}) {
		t.Fatalf("after destroy --target ConfigMap/a: %v, want a and c (which depends on it) gone", got)
	}
}

// TestDeleteProtection: protect refuses a prune, a destroy and a
// compensation's delete, naming the resource, before anything is deleted;
// dropping the annotation with the resource does not unprotect it; an admin's
// --allow-protected-delete deletes it; retain (and Helm's keep) leaves the
// object live and no longer managed, and the release lists it.
func TestDeleteProtection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createNamespace()
	ns := e.ns
	id := func(name string) string { return "v1:ConfigMap:" + ns + ":" + name }
	ann := map[string]string{
		"guard": `kumoproj.io/delete-policy: protect`,
		"keep":  `kumoproj.io/delete-policy: retain`,
		"helm":  `helm.sh/resource-policy: keep`,
	}
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", configMaps(ns, ann, "guard=1", "keep=1", "helm=1", "plain=1")))
	all := map[string]string{"guard": "1", "keep": "1", "helm": "1", "plain": "1"}

	// Prune: guard and plain dropped, guard's annotation with it.
	r := e.fails([]string{"apply", "--yes", "-f", e.writeSpec("v2.yaml", configMaps(ns, ann, "keep=1", "helm=1"))},
		"protected", id("guard"), "--allow-protected-delete")
	if strings.Contains(r.stderr+r.stdout, id("plain")+" (") {
		t.Errorf("the refusal names an unprotected resource:\n%s", r)
	}
	if got := e.configMapData(); !mapsEqual(got, all) {
		t.Fatalf("after the refused prune: %v, want nothing deleted", got)
	}

	// Destroy.
	e.fails([]string{"destroy", "--yes"}, "destroy would delete 1 protected resource(s)", id("guard"))
	if got := e.configMapData(); !mapsEqual(got, all) {
		t.Fatalf("after the refused destroy: %v, want nothing deleted", got)
	}

	// Compensation: a failed apply that created a protected object leaves it.
	v3 := configMaps(ns, map[string]string{"guard": ann["guard"], "keep": ann["keep"], "helm": ann["helm"], "newguard": ann["guard"]},
		"guard=1", "keep=1", "helm=1", "plain=1", "newguard=1") + brokenAfter(ns, id("newguard"))
	r = e.fails([]string{"apply", "--yes", "--rollback-on-failure", "-f", e.writeSpec("v3.yaml", v3)}, "data.nope")
	comp, _ := e.release(0)["compensation"].(map[string]any)
	if !strings.Contains(fmt.Sprint(comp["errors"]), "protected") || !strings.Contains(fmt.Sprint(comp["errors"]), id("newguard")) {
		t.Errorf("compensation errors = %v, want newguard refused as protected\n%s", comp["errors"], r)
	}
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), "newguard", metav1.GetOptions{}); err != nil {
		t.Errorf("newguard after compensation: %v, want it left live", err)
	}

	// An admin (the home's owner) may; retained objects stay live, unmanaged.
	out := e.ok("destroy", "--yes", "--allow-protected-delete")
	got := e.configMapData()
	if _, ok := got["guard"]; ok {
		t.Errorf("guard survived destroy --allow-protected-delete: %v", got)
	}
	if _, ok := got["plain"]; ok {
		t.Errorf("plain survived the destroy: %v", got)
	}
	if got["keep"] != "1" || got["helm"] != "1" {
		t.Errorf("retained objects after destroy: %v, want keep and helm live\n%s", got, out.stdout)
	}
	rel := e.release(0)
	if fmt.Sprint(rel["retained"]) != fmt.Sprintf("[%s %s]", id("helm"), id("keep")) {
		t.Errorf("release retained = %v, want helm and keep", rel["retained"])
	}
	if s := stateVersions(rel); len(s) != 0 {
		t.Errorf("state after destroy = %v, want nothing managed", s)
	}
}
