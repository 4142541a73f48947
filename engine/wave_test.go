package engine

import (
	"strings"
	"testing"
)

// waitsFor returns, for resource id of spec s, the resources its start needs
// healthy and those it needs only applied, following dependsOn, the implicit
// CRD edges and ExtAfterApplied as the walk of an apply does.
func waitsFor(t *testing.T, s *Spec, id string) (healthy, applied map[string]bool) {
	t.Helper()
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	only := s.AppliedOnly()
	type sets struct{ h, a map[string]bool }
	memo := map[string]sets{}
	var visit func(string) sets
	visit = func(n string) sets {
		if m, ok := memo[n]; ok {
			return m
		}
		out := sets{map[string]bool{}, map[string]bool{}}
		for _, d := range g.DependenciesOf(n) {
			sub := visit(d)
			for k := range sub.h {
				out.h[k] = true
			}
			for k := range sub.a {
				out.a[k] = true
			}
			out.a[d] = true
			if !only[n][d] {
				out.h[d] = true
				for k := range sub.a {
					out.h[k] = true // d started after them, and is healthy
				}
			}
		}
		memo[n] = out
		return out
	}
	got := visit(id)
	return got.h, got.a
}

func obj(apiVersion, kind, name string, annotations map[string]any) ManifestObject {
	meta := map[string]any{"name": name}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return ManifestObject{Where: "m.yaml:" + name, Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}}
}

// Without annotations a manifest set is one wave: the kinds are applied in
// their order, and nothing waits for an earlier kind's health. The
// ingress-nginx install: its admission Job patches the webhook configuration
// of a later tier, so holding that for the Job's completion deadlocks.
func TestManifestSpecOneWaveWaitsOnlyForApplied(t *testing.T) {
	spec, err := ManifestSpec([]ManifestObject{
		obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "ingress-nginx-admission", nil),
		obj("batch/v1", "Job", "ingress-nginx-admission-patch", nil),
		obj("v1", "ServiceAccount", "ingress-nginx-admission", nil),
		obj("v1", "Namespace", "ingress-nginx", nil),
		obj("apps/v1", "Deployment", "controller", nil),
	}, "ingress-nginx")
	if err != nil {
		t.Fatal(err)
	}
	const (
		hook = "admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration:ingress-nginx-admission"
		job  = "batch/v1:Job:ingress-nginx:ingress-nginx-admission-patch"
		ns   = "v1:Namespace:ingress-nginx"
		sa   = "v1:ServiceAccount:ingress-nginx:ingress-nginx-admission"
	)
	healthy, applied := waitsFor(t, spec, hook)
	if healthy[job] || !applied[job] {
		t.Errorf("the webhook configuration waits for the Job: healthy %v, applied %v; want applied only", healthy[job], applied[job])
	}
	if len(healthy) != 0 {
		t.Errorf("the webhook configuration waits for the health of %v, want nothing", healthy)
	}
	_, applied = waitsFor(t, spec, job)
	if !applied[ns] || !applied[sa] {
		t.Errorf("the Job does not start after the Namespace and ServiceAccount are applied: %v", applied)
	}
	if got := spec.Resources[len(spec.Resources)-1].ID; got != hook {
		t.Errorf("last resource %s, want the webhook configuration", got)
	}
}

// Sync waves order the set: each wave starts once the previous one is
// healthy; inside one, kinds go in order, applied together.
func TestManifestSpecSyncWaves(t *testing.T) {
	wave := func(n string) map[string]any { return map[string]any{AnnotationSyncWave: n} }
	spec, err := ManifestSpec([]ManifestObject{
		obj("v1", "Service", "late", wave("2")),
		obj("apps/v1", "Deployment", "db", wave("-1")),
		obj("v1", "ConfigMap", "db-config", wave("-1")),
		obj("batch/v1", "Job", "migrate", wave(" 0 ")),
		obj("v1", "ConfigMap", "app-config", nil),
		obj("apps/v1", "Deployment", "app", nil),
	}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range spec.Resources {
		order = append(order, r.ID)
	}
	want := []string{
		"v1:ConfigMap:demo:db-config", "apps/v1:Deployment:demo:db",
		"v1:ConfigMap:demo:app-config", "batch/v1:Job:demo:migrate", "apps/v1:Deployment:demo:app",
		"v1:Service:demo:late",
	}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("order\n%v\nwant\n%v", order, want)
	}
	for _, c := range []struct {
		id, needs   string
		wantHealthy bool
		wantApplied bool
	}{
		{"apps/v1:Deployment:demo:db", "v1:ConfigMap:demo:db-config", false, true},
		{"batch/v1:Job:demo:migrate", "apps/v1:Deployment:demo:db", true, true},
		{"batch/v1:Job:demo:migrate", "v1:ConfigMap:demo:db-config", true, true},
		{"apps/v1:Deployment:demo:app", "v1:ConfigMap:demo:app-config", false, true},
		{"apps/v1:Deployment:demo:app", "apps/v1:Deployment:demo:db", true, true},
		{"v1:Service:demo:late", "batch/v1:Job:demo:migrate", true, true},
		{"v1:Service:demo:late", "apps/v1:Deployment:demo:app", true, true},
		{"v1:ConfigMap:demo:app-config", "batch/v1:Job:demo:migrate", false, false},
	} {
		healthy, applied := waitsFor(t, spec, c.id)
		if healthy[c.needs] != c.wantHealthy || applied[c.needs] != c.wantApplied {
			t.Errorf("%s needs %s healthy %v applied %v, want %v %v", c.id, c.needs, healthy[c.needs], applied[c.needs], c.wantHealthy, c.wantApplied)
		}
	}
}

// A custom resource waits for its CRD to be Established, in the same wave
// too, while other kinds in between need it only applied.
func TestManifestSpecCRDEstablishedBeforeItsResources(t *testing.T) {
	crd := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", nil)
	crd.Object["spec"] = map[string]any{"group": "example.com", "scope": "Namespaced", "names": map[string]any{"kind": "Widget", "plural": "widgets"}}
	spec, err := ManifestSpec([]ManifestObject{obj("example.com/v1", "Widget", "w", nil), crd, obj("v1", "ConfigMap", "c", nil)}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	healthy, _ := waitsFor(t, spec, "example.com/v1:Widget:demo:w")
	if !healthy["apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com"] {
		t.Errorf("the Widget does not wait for its CRD's health: %v", healthy)
	}
	if healthy["v1:ConfigMap:demo:c"] {
		t.Errorf("the Widget waits for a ConfigMap's health")
	}
}

func TestManifestSpecRefusesABadSyncWave(t *testing.T) {
	_, err := ManifestSpec([]ManifestObject{obj("v1", "ConfigMap", "c", map[string]any{AnnotationSyncWave: "first"})}, "demo")
	if err == nil || !strings.Contains(err.Error(), "m.yaml:c") || !strings.Contains(err.Error(), AnnotationSyncWave) || !strings.Contains(err.Error(), `"first"`) && !strings.Contains(err.Error(), "first") {
		t.Fatalf("err %v, want one naming the file, the annotation and the value", err)
	}
}

func TestValidateAfterAppliedMustBeADependency(t *testing.T) {
	s := &Spec{Resources: []Resource{
		{ID: "v1:ConfigMap:demo:a", Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "demo"}}},
		{ID: "v1:ConfigMap:demo:b", Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b", "namespace": "demo"}},
			Extensions: map[string]any{ExtAfterApplied: []any{"v1:ConfigMap:demo:a"}}},
	}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), `resources[1] ("v1:ConfigMap:demo:b")`) || !strings.Contains(err.Error(), "not in dependsOn") {
		t.Fatalf("err %v, want one naming resources[1] and dependsOn", err)
	}
	s.Resources[1].DependsOn = []string{"v1:ConfigMap:demo:a"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Resources[1].Extensions[ExtAfterApplied] = "v1:ConfigMap:demo:a"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "want a list") {
		t.Fatalf("err %v, want one asking for a list", err)
	}
}

func TestValidateDeleteWithMustBeAfterApplied(t *testing.T) {
	a, b := "v1:ConfigMap:demo:a", "v1:ConfigMap:demo:b"
	s := &Spec{Resources: []Resource{
		{ID: a, Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "demo"}}},
		{ID: b, Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b", "namespace": "demo"}},
			DependsOn: []string{a}, Extensions: map[string]any{ExtDeleteWith: []any{a}}},
	}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), `resources[1] ("v1:ConfigMap:demo:b")`) || !strings.Contains(err.Error(), ExtDeleteWith) || !strings.Contains(err.Error(), "not in extensions."+ExtAfterApplied) {
		t.Fatalf("err %v, want one naming resources[1], the extension and %s", err, ExtAfterApplied)
	}
	s.Resources[1].Extensions[ExtAfterApplied] = []any{a}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Resources[1].Extensions[ExtDeleteWith] = []any{7}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "want a resource ID") {
		t.Fatalf("err %v, want one asking for a resource ID", err)
	}
}

// The edges inside a delete stage are ExtDeleteWith: inside a tier (the
// gate's to its tier-mates, the rest of a later wave's first tier's to the
// wave's first object) and between the tiers the workloads go with
// (Services, RBAC, configuration); not those between stages (Namespace,
// CRDs, custom resources, webhooks) or waves.
func TestManifestSpecMarksDeleteStageEdges(t *testing.T) {
	spec, err := ManifestSpec([]ManifestObject{
		obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "hook", nil),
		obj("example.com/v1", "Widget", "w", nil),
		obj("v1", "Namespace", "demo", nil),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", nil),
		obj("v1", "ServiceAccount", "sa1", nil),
		obj("v1", "ServiceAccount", "sa2", nil),
		obj("v1", "Service", "svc", nil),
		obj("apps/v1", "Deployment", "d1", nil),
		obj("apps/v1", "Deployment", "d2", nil),
		obj("v1", "ConfigMap", "w1a", map[string]any{AnnotationSyncWave: "1"}),
		obj("v1", "ConfigMap", "w1b", map[string]any{AnnotationSyncWave: "1"}),
		obj("v1", "ConfigMap", "w1c", map[string]any{AnnotationSyncWave: "1"}),
	}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	with := map[string][]string{}
	for i := range spec.Resources {
		ids, err := DeleteWithOf(&spec.Resources[i])
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 {
			with[spec.Resources[i].ID] = ids
		}
	}
	want := map[string][]string{
		"v1:ServiceAccount:demo:sa2": {"v1:ServiceAccount:demo:sa1"},
		"v1:Service:demo:svc":        {"v1:ServiceAccount:demo:sa2"},
		"apps/v1:Deployment:demo:d1": {"v1:Service:demo:svc"},
		"apps/v1:Deployment:demo:d2": {"apps/v1:Deployment:demo:d1"},
		"v1:ConfigMap:demo:w1b":      {"v1:ConfigMap:demo:w1a"},
		"v1:ConfigMap:demo:w1c":      {"v1:ConfigMap:demo:w1a", "v1:ConfigMap:demo:w1b"},
	}
	if len(with) != len(want) {
		t.Errorf("delete-with %v, want %v", with, want)
	}
	for id, ids := range want {
		if strings.Join(with[id], ",") != strings.Join(ids, ",") {
			t.Errorf("%s: delete-with %v, want %v", id, with[id], ids)
		}
	}
}

// Skip leaves an object out, as Argo CD does (neither resource nor hook).
func TestManifestSpecArgoHooks(t *testing.T) {
	skip := obj("batch/v1", "Job", "skipped", map[string]any{AnnotationHook: "Skip"})
	spec, err := ManifestSpec([]ManifestObject{skip, obj("v1", "ConfigMap", "c", nil)}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Resources) != 1 || spec.Resources[0].ID != "v1:ConfigMap:demo:c" {
		t.Errorf("resources %+v, want the ConfigMap alone", spec.Resources)
	}
	if len(spec.Hooks) != 0 {
		t.Errorf("hooks %+v, want none: Skip leaves the object out", spec.Hooks)
	}
}
