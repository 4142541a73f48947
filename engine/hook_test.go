package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Hooks go into Spec.Hooks, never into its resources, with their events,
// weights and delete policies read as Argo CD and Helm read them.
func TestManifestSpecHooks(t *testing.T) {
	gen := obj("batch/v1", "Job", "", map[string]any{AnnotationHook: "PostSync", AnnotationHookDeletePolicy: "HookSucceeded, BeforeHookCreation"})
	meta := gen.Object["metadata"].(map[string]any)
	delete(meta, "name")
	meta["generateName"] = "smoke-"
	spec, err := ManifestSpec([]ManifestObject{
		obj("batch/v1", "Job", "migrate", map[string]any{AnnotationHook: "PreSync,SyncFail", AnnotationSyncWave: "-1"}),
		obj("v1", "ConfigMap", "c", nil),
		gen,
		obj("batch/v1", "Job", "helm-pre", map[string]any{AnnotationHelmHook: "pre-install,pre-upgrade", AnnotationHelmHookWeight: "5", AnnotationHelmHookDeletePolicy: "hook-failed"}),
		obj("v1", "Pod", "helm-test", map[string]any{AnnotationHelmHook: "test"}),
	}, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Resources) != 1 || spec.Resources[0].ID != "v1:ConfigMap:demo:c" {
		t.Fatalf("resources %+v, want the ConfigMap alone", spec.Resources)
	}
	ids := make([]string, len(spec.Hooks))
	for i, h := range spec.Hooks {
		ids[i] = h.ID
	}
	want := []string{"batch/v1:Job:demo:migrate", "batch/v1:Job:demo:smoke-*", "batch/v1:Job:demo:helm-pre", "v1:Pod:demo:helm-test"}
	if !slices.Equal(ids, want) {
		t.Fatalf("hooks %v, want %v", ids, want)
	}
	if h := spec.Hooks[0]; h.Helm || h.Weight != -1 || !slices.Equal(h.Events, []HookEvent{HookPreSync, HookSyncFail}) || !h.Deletes(HookBeforeCreation) || h.Deletes(HookSucceeded) {
		t.Errorf("PreSync hook %+v", h)
	}
	if h := spec.Hooks[1]; h.Name() != "smoke-" || !h.Deletes(HookSucceeded) || !h.Deletes(HookBeforeCreation) || h.Deletes(HookFailed) {
		t.Errorf("generated hook %+v", h)
	}
	if h := spec.Hooks[2]; !h.Helm || h.Weight != 5 || !slices.Equal(h.DeletePolicies, []HookDeletePolicy{HookFailed}) || h.Deletes(HookBeforeCreation) {
		t.Errorf("Helm hook %+v", h)
	}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// A Spec with hooks round-trips through JSON (the stored spec).
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(data, &back); err != nil || len(back.Hooks) != 4 || back.Hooks[2].Weight != 5 {
		t.Errorf("round trip: %v %+v", err, back.Hooks)
	}
}

// Bad hook annotations are errors naming where, the annotation and the
// value; a generateName is only for hooks; a hook may not be a resource too.
func TestManifestSpecHookErrors(t *testing.T) {
	for _, c := range []struct {
		ann  map[string]any
		want string
	}{
		{map[string]any{AnnotationHook: "PreSnyc"}, `m.yaml:j: Job batch/v1:Job:demo:j: metadata.annotations["argocd.argoproj.io/hook"]: "PreSnyc" is not a hook Argo CD knows`},
		{map[string]any{AnnotationHook: "PreSync", AnnotationHookDeletePolicy: "Always"}, `"Always" is not a delete policy (want BeforeHookCreation, HookFailed, HookSucceeded)`},
		{map[string]any{AnnotationHelmHook: "pre-instal"}, `"pre-instal" is not a hook Helm knows`},
		{map[string]any{AnnotationHelmHook: "pre-install", AnnotationHelmHookWeight: "first"}, `metadata.annotations["helm.sh/hook-weight"] is first: want an integer`},
		{map[string]any{AnnotationHelmHook: "pre-install", AnnotationHelmHookDeletePolicy: "HookSucceeded"}, `"HookSucceeded" is not a delete policy (want before-hook-creation, hook-failed, hook-succeeded)`},
		{map[string]any{AnnotationHook: " , "}, `is empty: name the hook's events`},
	} {
		_, err := ManifestSpec([]ManifestObject{obj("batch/v1", "Job", "j", c.ann)}, "demo")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q", c.ann, err, c.want)
		}
	}
	gen := obj("batch/v1", "Job", "", nil)
	gen.Object["metadata"].(map[string]any)["generateName"] = "x-"
	delete(gen.Object["metadata"].(map[string]any), "name")
	if _, err := ManifestSpec([]ManifestObject{gen}, "demo"); err == nil || !strings.Contains(err.Error(), "only a hook may be generated") {
		t.Errorf("generateName resource: %v", err)
	}
	_, err := ManifestSpec([]ManifestObject{
		obj("batch/v1", "Job", "j", map[string]any{AnnotationHook: "PreSync"}),
		obj("batch/v1", "Job", "j", map[string]any{AnnotationHook: "PostSync"}),
	}, "demo")
	if err == nil || !strings.Contains(err.Error(), "m.yaml:j and m.yaml:j are the same hook (batch/v1:Job:demo:j)") {
		t.Errorf("duplicate hook: %v", err)
	}
	_, err = ManifestSpec([]ManifestObject{
		obj("batch/v1", "Job", "j", map[string]any{AnnotationHook: "PreSync"}),
		obj("batch/v1", "Job", "j", nil),
	}, "demo")
	if err == nil || !strings.Contains(err.Error(), "hooks[0] (batch/v1:Job:demo:j): the same object is a resource of the spec too") {
		t.Errorf("hook and resource: %v", err)
	}
}

// Which hooks run where: Argo CD's phases at every sync, Helm's events by
// operation (install or upgrade), in weight order, Helm's by name too, and
// grouped as they are created together.
func TestHooksAt(t *testing.T) {
	h := func(name string, helm bool, weight int, events ...HookEvent) Hook {
		return Hook{ID: "batch/v1:Job:d:" + name, Helm: helm, Weight: weight, Events: events,
			Attributes: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": name, "namespace": "d"}}}
	}
	hooks := []Hook{
		h("z-up", true, 0, HelmPreUpgrade), h("a-inst", true, 0, HelmPreInstall, HelmPreUpgrade),
		h("argo2", false, 1, HookPreSync), h("argo1", false, 1, HookPreSync), h("early", true, -5, HelmPreInstall),
		h("post", false, 0, HookPostSync), h("fail", false, 0, HookSyncFail), h("del", true, 0, HelmPreDelete),
		h("rb", true, 0, HelmPreRollback), h("test", true, 0, HelmTest), h("gone", false, 0, HookPostDelete),
	}
	names := func(hs []Hook) string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Name())
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		op      Operation
		p       HookPoint
		upgrade bool
		want    string
	}{
		{OperationApply, HookPointPre, false, "early a-inst argo2 argo1"},
		{OperationApply, HookPointPre, true, "a-inst z-up argo2 argo1"},
		{OperationApply, HookPointPost, true, "post"},
		{OperationApply, HookPointFail, false, "fail"},
		{OperationApply, HookPointSync, false, ""},
		{OperationRollback, HookPointPre, true, "rb argo2 argo1"},
		{OperationDestroy, HookPointPre, true, "del"},
		{OperationDestroy, HookPointPost, true, "gone"},
		{OperationDestroy, HookPointFail, true, ""},
		{OperationApply, HookPointTest, true, "test"},
	} {
		if got := names(HooksAt(hooks, HookEventsFor(c.op, c.p, c.upgrade))); got != c.want {
			t.Errorf("%s %s upgrade=%v: %q, want %q", c.op, c.p, c.upgrade, got, c.want)
		}
	}
	groups := HookGroups(HooksAt(hooks, HookEventsFor(OperationApply, HookPointPre, false)))
	var got []string
	for _, g := range groups {
		got = append(got, names(g))
	}
	if want := []string{"early", "a-inst", "argo2 argo1"}; !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
}
