package drift

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"
)

// deployment builds a Deployment as the apiserver returns it: replicas, an
// image, a defaulted strategy, and managedFields entries.
func deployment(replicas int64, image string, managed ...any) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "demo", "managedFields": managed},
		"spec": map[string]any{
			"replicas": replicas,
			"strategy": map[string]any{"type": "RollingUpdate"},
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "sidecar", "image": "busybox"},
				map[string]any{"name": "web", "image": image, "terminationMessagePath": "/dev/termination-log"},
			}}},
		},
	}
}

func entry(manager, op string, set map[string]any) map[string]any {
	return map[string]any{"manager": manager, "operation": op, "fieldsV1": set}
}

var kumoSet = map[string]any{
	"f:spec": map[string]any{
		"f:replicas": map[string]any{},
		"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
			`k:{"name":"web"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:image": map[string]any{}},
		}}},
	},
}

func TestKubernetes(t *testing.T) {
	scaleSet := map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
	imageSet := map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
		`k:{"name":"web"}`: map[string]any{"f:image": map[string]any{}},
	}}}}}
	dry := deployment(3, "nginx:1", entry("kumo", "Apply", kumoSet))
	tests := []struct {
		name string
		live map[string]any
		want []Field
	}{
		{"same values, server defaults differ", func() map[string]any {
			l := deployment(3, "nginx:1", entry("kumo", "Apply", kumoSet))
			l["spec"].(map[string]any)["strategy"] = map[string]any{"type": "Recreate"}
			return l
		}(), nil},
		{"scaled by another manager", deployment(5, "nginx:1", entry("kumo", "Apply", kumoSet), entry("kubectl-scale", "Update", scaleSet)),
			[]Field{{Path: "/spec/replicas", Recorded: int64(3), Live: int64(5), Manager: "kubectl-scale"}}},
		{"image changed, list item found by key", deployment(3, "nginx:2", entry("kumo", "Apply", kumoSet), entry("kubectl-set", "Update", imageSet)),
			[]Field{{Path: "/spec/template/spec/containers/1/image", Recorded: "nginx:1", Live: "nginx:2", Manager: "kubectl-set"}}},
		{"list item removed", func() map[string]any {
			l := deployment(3, "nginx:1")
			l["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{map[string]any{"name": "sidecar"}}
			return l
		}(), []Field{{Path: "/spec/template/spec/containers/1", Recorded: map[string]any{"name": "web", "image": "nginx:1", "terminationMessagePath": "/dev/termination-log"}, Absent: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Kubernetes(dry, tc.live, "kumo")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestKubernetesConfigMapKeys(t *testing.T) {
	set := map[string]any{"f:data": map[string]any{"f:color": map[string]any{}, "f:a/b~c": map[string]any{}}}
	cm := func(data map[string]any, managed ...any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "managedFields": managed}, "data": data}
	}
	dry := cm(map[string]any{"color": "blue", "a/b~c": "x", "other": "y"}, entry("kumo", "Apply", set))
	live := cm(map[string]any{"color": "red", "other": "z"}, entry("kumo", "Apply", map[string]any{"f:data": map[string]any{}}),
		entry("editor", "Update", map[string]any{"f:data": map[string]any{"f:color": map[string]any{}, "f:other": map[string]any{}}}))
	got, err := Kubernetes(dry, live, "kumo")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{Path: "/data/a~1b~0c", Recorded: "x", Absent: true},
		{Path: "/data/color", Recorded: "blue", Live: "red", Manager: "editor"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

// TestKubernetesNoKumoEntry: a dry run in which kumo owns no field (a bare
// Namespace) compares nothing, however live differs.
func TestKubernetesNoKumoEntry(t *testing.T) {
	if got, err := Kubernetes(deployment(1, "x"), deployment(2, "y"), "kumo"); err != nil || got != nil {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := Kubernetes(map[string]any{}, deployment(2, "y"), "kumo"); err == nil {
		t.Error("a dry-run result without metadata compared without error")
	}
}

func TestValues(t *testing.T) {
	rec := map[string]any{"content": "mine", "id": "1", "tags": map[string]any{"a": "1"}, "n": int64(2), "list": []any{"x", "y"}}
	live := map[string]any{"content": "theirs", "id": "1", "tags": map[string]any{"a": "1", "b": "2"}, "n": 2.0, "list": []any{"x"}}
	want := []Field{
		{Path: "/content", Recorded: "mine", Live: "theirs"},
		{Path: "/list/1", Recorded: "y", Absent: true},
		{Path: "/tags/b", Live: "2"},
	}
	if got := Values(rec, live); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

// A list the apiserver treats as atomic (a CRD list without
// x-kubernetes-list-type, as Kyverno's spec.rules) is one leaf of kumo's field
// set; a change deep inside it is named by its own path, owned by whoever
// holds the list now, not reported as the whole list.
func TestKubernetesAtomicList(t *testing.T) {
	policy := func(message string, rules int, managed ...any) map[string]any {
		list := []any{}
		for i := range rules {
			list = append(list, map[string]any{
				"name":     fmt.Sprintf("rule-%d", i),
				"validate": map[string]any{"message": message, "pattern": map[string]any{"spec": map[string]any{"x": "y"}}},
			})
		}
		return map[string]any{
			"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
			"metadata": map[string]any{"name": "require-labels", "managedFields": managed},
			"spec":     map[string]any{"rules": list},
		}
	}
	set := map[string]any{"f:spec": map[string]any{"f:rules": map[string]any{}}}
	dry := policy("labels are required", 1, entry("kumo", "Apply", set))

	live := policy("anything goes", 1, entry("kubectl-edit", "Update", set))
	got, err := Kubernetes(dry, live, "kumo")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{Path: "/spec/rules/0/validate/message", Recorded: "labels are required", Live: "anything goes", Manager: "kubectl-edit"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changed message:\ngot  %#v\nwant %#v", got, want)
	}

	live = policy("labels are required", 2, entry("kubectl-edit", "Update", set))
	got, err = Kubernetes(dry, live, "kumo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != "/spec/rules/1" || got[0].Recorded != nil || got[0].Live == nil {
		t.Errorf("added rule: got %#v, want one field /spec/rules/1 that only live has", got)
	}
}

// secret builds a Secret as the apiserver returns it: stringData folded into
// data (base64), no stringData left.
func secret(password string, managed ...any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "db", "namespace": "demo", "managedFields": managed},
		"data":     map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(password)), "user": "YWRtaW4="},
	}
}

// A Secret applied with stringData is compared by live data: a value patched
// out of band (kubectl patch -p '{"stringData":{...}}') is drift of
// /data/<key>, owned by the patcher; unchanged values are in sync.
func TestKubernetesSecretStringData(t *testing.T) {
	applied := map[string]any{
		"f:type":       map[string]any{},
		"f:data":       map[string]any{"f:user": map[string]any{}},
		"f:stringData": map[string]any{".": map[string]any{}, "f:password": map[string]any{}},
	}
	patched := map[string]any{"f:data": map[string]any{"f:password": map[string]any{}}}
	dry := secret("s3cret", entry("kumo", "Apply", applied))

	got, err := Kubernetes(dry, secret("s3cret", entry("kumo", "Apply", applied)), "kumo")
	if err != nil || got != nil {
		t.Errorf("in sync: %v, %v", got, err)
	}
	got, err = Kubernetes(dry, secret("changed", entry("kumo", "Apply", applied), entry("kubectl-patch", "Update", patched)), "kumo")
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{Path: "/data/password", Recorded: "czNjcmV0", Live: "Y2hhbmdlZA==", Manager: "kubectl-patch"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patched: got %+v\nwant %+v", got, want)
	}
	// The applied set itself is left as it was (it is the dry run's own object).
	if _, ok := applied["f:stringData"]; !ok || len(applied["f:data"].(map[string]any)) != 1 {
		t.Errorf("the applied set was changed: %v", applied)
	}
	// Only a core Secret is folded: a custom kind's stringData is its own field.
	other := map[string]any{"apiVersion": "example.com/v1", "kind": "Secret"}
	if got := foldWriteOnly(other, applied); !reflect.DeepEqual(got, applied) {
		t.Errorf("foldWriteOnly(example.com/v1 Secret) = %v", got)
	}
}
