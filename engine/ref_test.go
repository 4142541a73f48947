package engine

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func refSpec() *Spec {
	return &Spec{Resources: []Resource{
		{ID: "v1:Service:demo:web", Type: Kubernetes},
		{ID: "v1:Service:demo:web.v1", Type: Kubernetes},
		{ID: "hashicorp:random:random_password:db", Type: Terraform},
		{ID: "apps/v1:Deployment:demo:web", Type: Kubernetes, Attributes: map[string]any{
			"spec": map[string]any{
				"containers": []any{map[string]any{
					"env": []any{
						map[string]any{"name": "IP", "value": "$kumo_path.v1:Service:demo:web.spec.clusterIP"},
						map[string]any{"name": "IP2", "value": "$kumo_path.v1:Service:demo:web.v1.spec.clusterIP"},
						map[string]any{"name": "PORT", "value": "$kumo_path.v1:Service:demo:web.spec.ports.0.port"},
						map[string]any{"name": "PW", "value": "$kumo_path.hashicorp:random:random_password:db.result"},
						map[string]any{"name": "AGAIN", "value": "$kumo_path.v1:Service:demo:web.spec.clusterIP"},
						map[string]any{"name": "PLAIN", "value": "kumo_path is just text"},
					},
				}},
			},
		}},
	}}
}

func TestRefs(t *testing.T) {
	s := refSpec()
	refs, err := s.Refs(&s.Resources[3])
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{
		{"$kumo_path.v1:Service:demo:web.spec.clusterIP", "v1:Service:demo:web", []string{"spec", "clusterIP"}},
		{"$kumo_path.v1:Service:demo:web.v1.spec.clusterIP", "v1:Service:demo:web.v1", []string{"spec", "clusterIP"}},
		{"$kumo_path.v1:Service:demo:web.spec.ports.0.port", "v1:Service:demo:web", []string{"spec", "ports", "0", "port"}},
		{"$kumo_path.hashicorp:random:random_password:db.result", "hashicorp:random:random_password:db", []string{"result"}},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("Refs =\n%#v\nwant\n%#v", refs, want)
	}
}

func TestRefsUnknownResource(t *testing.T) {
	s := refSpec()
	r := &Resource{ID: "x", Attributes: map[string]any{
		"a": []any{"$kumo_path.v1:Service:demo:nope.spec.clusterIP"},
		"b": "$kumo_path.v1:Service:demo:web",
	}}
	_, err := s.Refs(r)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"reference $kumo_path.v1:Service:demo:nope.spec.clusterIP: no resource with that id in the spec",
		"reference $kumo_path.v1:Service:demo:web: no attribute path after resource v1:Service:demo:web",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestResolveRefs(t *testing.T) {
	s := refSpec()
	dep := &s.Resources[3]
	refs, err := s.Refs(dep)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]map[string]any{
		"v1:Service:demo:web":                 {"spec": map[string]any{"clusterIP": "10.0.0.7", "ports": []any{map[string]any{"port": 80}}}},
		"v1:Service:demo:web.v1":              {"spec": map[string]any{"clusterIP": "10.0.0.8"}},
		"hashicorp:random:random_password:db": {"result": "s3cret"},
	}
	got, err := ResolveRefs(dep.Attributes, refs, func(id string) (map[string]any, bool) {
		m, ok := live[id]
		return m, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	env := got["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"].([]any)
	values := map[string]any{}
	for _, e := range env {
		m := e.(map[string]any)
		values[m["name"].(string)] = m["value"]
	}
	want := map[string]any{"IP": "10.0.0.7", "IP2": "10.0.0.8", "PORT": int64(80), "PW": "s3cret", "AGAIN": "10.0.0.7", "PLAIN": "kumo_path is just text"}
	if !reflect.DeepEqual(values, want) {
		t.Fatalf("resolved = %#v\nwant %#v", values, want)
	}
	// The input is untouched.
	orig := dep.Attributes["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["env"].([]any)[0].(map[string]any)["value"]
	if orig != "$kumo_path.v1:Service:demo:web.spec.clusterIP" {
		t.Fatalf("input changed: %v", orig)
	}
}

func TestResolveRefsKeepsObjects(t *testing.T) {
	ref := Ref{Raw: "$kumo_path.a.spec.selector", ResourceID: "a", Path: []string{"spec", "selector"}}
	got, err := ResolveRefs(map[string]any{"selector": ref.Raw}, []Ref{ref}, func(string) (map[string]any, bool) {
		return map[string]any{"spec": map[string]any{"selector": map[string]any{"app": "web"}}}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"selector": map[string]any{"app": "web"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestResolveRefsErrors(t *testing.T) {
	refs := []Ref{
		{Raw: "$kumo_path.v1:Service:demo:web.spec.nope", ResourceID: "v1:Service:demo:web", Path: []string{"spec", "nope"}},
		{Raw: "$kumo_path.v1:Service:demo:web.spec.ports.3.port", ResourceID: "v1:Service:demo:web", Path: []string{"spec", "ports", "3", "port"}},
		{Raw: "$kumo_path.v1:Service:demo:gone.spec.clusterIP", ResourceID: "v1:Service:demo:gone", Path: []string{"spec", "clusterIP"}},
	}
	live := func(id string) (map[string]any, bool) {
		if id != "v1:Service:demo:web" {
			return nil, false
		}
		return map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}, true
	}
	_, err := ResolveRefs(map[string]any{"a": refs[0].Raw}, refs, live)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`resolve $kumo_path.v1:Service:demo:web.spec.nope: field "spec.nope" not found in v1:Service:demo:web`,
		`resolve $kumo_path.v1:Service:demo:web.spec.ports.3.port: field "spec.ports.3.port" not found in v1:Service:demo:web`,
		`resolve $kumo_path.v1:Service:demo:gone.spec.clusterIP: resource v1:Service:demo:gone does not exist`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A Spec written by Kusion refers with $kusion_path: same meaning, IDs with dots
// resolved by the longest match, inside lists and Terraform arguments, and an
// edge in the graph without dependsOn.
func TestKusionPathRefs(t *testing.T) {
	s := &Spec{Resources: []Resource{
		{ID: "hashicorp:local:local_file:conf", Type: Terraform, Attributes: map[string]any{
			"filename": "/tmp/x",
			"content":  []any{"$kusion_path.apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com.spec.group"},
		}},
		{ID: "apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com", Type: Kubernetes},
		{ID: "apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example", Type: Kubernetes},
	}}
	refs, err := s.Refs(&s.Resources[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{{"$kusion_path.apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com.spec.group",
		"apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com", []string{"spec", "group"}}}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("Refs = %#v\nwant %#v", refs, want)
	}
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	order, err := g.TopoSort()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Index(order, s.Resources[1].ID) > slices.Index(order, s.Resources[0].ID) {
		t.Fatalf("order %v: the referring resource comes before the one it refers to", order)
	}
	if !IsRef(want[0].Raw) || IsRef("kusion_path.x.y") {
		t.Fatal("IsRef does not tell $kusion_path references from text")
	}
	s.Resources[0].Attributes["x"] = "$kusion_path.v1:Secret:demo:nope.data.pw"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(),
		`resources[0] ("hashicorp:local:local_file:conf"): reference $kusion_path.v1:Secret:demo:nope.data.pw: no resource with that id`) {
		t.Fatalf("Validate = %v, want an error naming the resource and the reference", err)
	}
}
