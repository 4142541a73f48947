package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

const secretMarker = "s3cr3t-7d1f0e"

func secret(data map[string]any) *Resource {
	return &Resource{ID: "v1:Secret:demo:db", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "demo", "annotations": map[string]any{
			lastApplied: `{"data":{"password":"` + secretMarker + `"}}`,
		}},
		"data": data,
	}}
}

func mustNotShow(t *testing.T, what string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secretMarker) || strings.Contains(string(data), fingerprintPrefix) {
		t.Errorf("%s shows a sensitive value or a fingerprint: %s", what, data)
	}
}

func TestDiffMasksSecretValuesButSeesTheirChanges(t *testing.T) {
	prior := secret(map[string]any{"password": secretMarker, "user": "app"})
	toA := secret(map[string]any{"password": secretMarker + "-a", "user": "app"})
	toB := secret(map[string]any{"password": secretMarker + "-b", "user": "app"})

	a := Diff(prior.ID, Kubernetes, toA, prior, prior)
	b := Diff(prior.ID, Kubernetes, toB, prior, prior)
	same := Diff(prior.ID, Kubernetes, prior, prior, prior)
	mustNotShow(t, "the change to A", a)
	mustNotShow(t, "the change to B", b)

	if a.Action != Update || len(a.Fields) != 1 || a.Fields[0].Path != "data.password" {
		t.Fatalf("change of a Secret value: %+v", a)
	}
	if f := a.Fields[0]; f.Before != Masked || f.After != Masked || f.Sensitive == "" {
		t.Errorf("field %+v: want both sides %s and a fingerprint", f, Masked)
	}
	if same.Action != UnChanged || len(same.Fields) != 0 {
		t.Errorf("unchanged Secret: %+v", same)
	}
	if PlanDigest([]Change{a}) == PlanDigest([]Change{b}) {
		t.Error("plans changing the value to A and to B have the same digest")
	}
	if PlanDifference([]Change{a}, []Change{b}) == "" {
		t.Error("PlanDifference finds no difference between changing to A and to B")
	}
	if PlanDigest([]Change{a}) != PlanDigest([]Change{Diff(prior.ID, Kubernetes, toA, prior, prior)}) {
		t.Error("the same plan has two digests")
	}

	created := Diff(prior.ID, Kubernetes, toA, nil, nil)
	if created.Action != Create {
		t.Errorf("new Secret: %s", created.Action)
	}
	// A key added shows the key, not the value.
	added := Diff(prior.ID, Kubernetes, secret(map[string]any{"password": secretMarker, "user": "app", "token": secretMarker}), prior, prior)
	mustNotShow(t, "an added key", added)
	if len(added.Fields) != 1 || added.Fields[0].Path != "data.token" || added.Fields[0].Before != nil || added.Fields[0].After != Masked {
		t.Errorf("added key: %+v", added.Fields)
	}
}

func TestDiffSpecsMasksSecretValues(t *testing.T) {
	from := &Spec{Resources: []Resource{*secret(map[string]any{"password": secretMarker})}}
	to := &Spec{Resources: []Resource{*secret(map[string]any{"password": secretMarker + "x"})}}
	changes := DiffSpecs(from, to)
	mustNotShow(t, "release diff", changes)
	if len(changes) != 1 || len(changes[0].Fields) != 1 || changes[0].Fields[0].Path != "attributes.data.password" {
		t.Fatalf("DiffSpecs: %+v", changes)
	}
}

func TestMaskSensitiveLeavesTheOriginal(t *testing.T) {
	r := secret(map[string]any{"password": secretMarker})
	r.Attributes["stringData"] = map[string]any{"extra": secretMarker}
	m := MaskSensitive(*r)
	mustNotShow(t, "a masked Secret", m)
	if r.Attributes["data"].(map[string]any)["password"] != secretMarker ||
		r.Attributes["stringData"].(map[string]any)["extra"] != secretMarker ||
		!strings.Contains(r.Attributes["metadata"].(map[string]any)["annotations"].(map[string]any)[lastApplied].(string), secretMarker) {
		t.Error("MaskSensitive changed the resource it was given")
	}
	cm := Resource{ID: "v1:ConfigMap:demo:c", Type: Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "visible"}}}
	if got := MaskSensitive(cm); got.Attributes["data"].(map[string]any)["k"] != "visible" {
		t.Errorf("a ConfigMap was masked: %v", got.Attributes)
	}
}

func TestTerraformSensitiveAttributes(t *testing.T) {
	spec := &Resource{ID: "hashicorp:random:random_password:db", Type: Terraform, Attributes: map[string]any{"length": 16}}
	live := &Resource{ID: spec.ID, Type: Terraform,
		Attributes: map[string]any{"length": 16, "result": secretMarker},
		Extensions: map[string]any{ExtSensitiveAttributes: []any{"result"}, ExtTerraformState: `{"result":"` + secretMarker + `"}`}}
	planned := &Resource{ID: spec.ID, Type: Terraform, Attributes: map[string]any{"length": 16, "result": secretMarker + "2"}}
	c := Diff(spec.ID, Terraform, planned, live, live)
	mustNotShow(t, "a Terraform change", c)
	if len(c.Fields) != 1 || c.Fields[0].Path != "result" || c.Fields[0].Sensitive == "" {
		t.Errorf("sensitive attribute change: %+v", c.Fields)
	}
	mustNotShow(t, "a masked Terraform resource", MaskSensitive(*live))
}

// A spec does not say which Terraform attributes are sensitive; its release's
// state does.
func TestReleaseSpecMarksWhatTheStateKnows(t *testing.T) {
	res := func(value string, ext map[string]any) Resource {
		e := map[string]any{ExtProvider: "registry.terraform.io/hashicorp/local/1.4.0", ExtResourceType: "local_file"}
		for k, v := range ext {
			e[k] = v
		}
		return Resource{ID: "hashicorp:local:local_file:key", Type: Terraform, Attributes: map[string]any{"sensitive_content": value, "filename": "f"}, Extensions: e}
	}
	rel := func(value string) *Release {
		return &Release{
			Spec:  &Spec{Resources: []Resource{res(value, nil)}},
			State: &State{Resources: []Resource{res(value, map[string]any{ExtSensitiveAttributes: []any{"sensitive_content"}})}},
		}
	}
	a, b := rel(secretMarker), rel(secretMarker+"2")
	mustNotShow(t, "a masked release spec", MaskResources(ReleaseSpec(a).Resources))
	changes := DiffSpecs(ReleaseSpec(a), ReleaseSpec(b))
	mustNotShow(t, "release diff of a Terraform resource", changes)
	if len(changes) != 1 || len(changes[0].Fields) != 1 || changes[0].Fields[0].Path != "attributes.sensitive_content" {
		t.Errorf("release diff: %+v", changes)
	}
	if _, ok := a.Spec.Resources[0].Extensions[ExtSensitiveAttributes]; ok {
		t.Error("ReleaseSpec changed the release")
	}
}
