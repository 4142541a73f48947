package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// deployment returns a Deployment as the API server returns it (after a dry run or a
// read): server defaults, managedFields, resourceVersion and status included.
func deployment(t *testing.T, mutate func(d map[string]any)) *Resource {
	t.Helper()
	const obj = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "web", "namespace": "demo",
    "uid": "6f1c8a52-2b1e-4c51-9d2a-0c7b3e1a9f10",
    "resourceVersion": "1234",
    "generation": 3,
    "creationTimestamp": "2025-01-02T03:04:05Z",
    "labels": {"app.kubernetes.io/name": "web"},
    "annotations": {"deployment.kubernetes.io/revision": "3"},
    "managedFields": [{"manager": "kumo", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1"}]
  },
  "spec": {
    "replicas": 2,
    "revisionHistoryLimit": 10,
    "progressDeadlineSeconds": 600,
    "selector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    "template": {
      "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
      "spec": {
        "containers": [{
          "name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
          "ports": [{"containerPort": 8080, "protocol": "TCP"}],
          "terminationMessagePath": "/dev/termination-log"
        }],
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30
      }
    }
  },
  "status": {"observedGeneration": 3, "replicas": 2, "readyReplicas": 2, "availableReplicas": 2}
}`
	var m map[string]any
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(m)
	}
	return &Resource{ID: "apps/v1:Deployment:demo:web", Type: Kubernetes, Attributes: m}
}

func path(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

func container(m map[string]any) map[string]any {
	return path(m, "spec", "template", "spec")["containers"].([]any)[0].(map[string]any)
}

const depID = "apps/v1:Deployment:demo:web"

func TestDiffActions(t *testing.T) {
	d := deployment(t, nil)
	cases := []struct {
		name                 string
		planned, live, prior *Resource
		want                 Action
	}{
		{"create", d, nil, nil, Create},
		{"create again after out-of-band delete", d, nil, d, Create},
		{"unchanged", d, deployment(t, nil), d, UnChanged},
		{"adopt: live, identical, not recorded", d, deployment(t, nil), nil, Adopt},
		{"delete", nil, d, d, Delete},
		{"gone already", nil, nil, d, UnChanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Diff(depID, Kubernetes, c.planned, c.live, c.prior)
			if got.Action != c.want || got.ID != depID || got.Type != Kubernetes {
				t.Fatalf("Diff = %+v, want action %s", got, c.want)
			}
			if c.want != Update && len(got.Fields) != 0 {
				t.Fatalf("fields on %s: %+v", got.Action, got.Fields)
			}
			if got.Drifted {
				t.Fatal("drifted")
			}
		})
	}
}

func TestDiffIgnoresServerFields(t *testing.T) {
	live := deployment(t, nil)
	planned := deployment(t, func(d map[string]any) {
		meta := path(d, "metadata")
		meta["resourceVersion"] = "1240"
		meta["generation"] = 4
		meta["uid"] = "other"
		meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
		meta["managedFields"] = []any{map[string]any{"manager": "kubectl", "operation": "Update"}}
		delete(meta, "annotations") // dry run of a new revision has no revision annotation yet
		d["status"] = map[string]any{"replicas": 1}
	})
	if c := Diff(depID, Kubernetes, planned, live, live); c.Action != UnChanged || len(c.Fields) != 0 {
		t.Fatalf("server-maintained fields made a change: %+v", c)
	}
	// Terraform resources have no such fields: everything counts.
	if c := Diff("t:f:x:y", Terraform, planned, live, nil); c.Action != Update {
		t.Fatalf("Terraform diff ignored fields: %+v", c)
	}
}

func TestDiffUpdateFields(t *testing.T) {
	live := deployment(t, nil)
	planned := deployment(t, func(d map[string]any) {
		path(d, "spec")["replicas"] = 3
		path(d, "metadata", "labels")["team"] = "payments"
		container(d)["image"] = "nginx:1.28"
		path(d, "spec", "template", "metadata", "labels")["app.kubernetes.io/version"] = "1.28"
		delete(path(d, "spec"), "revisionHistoryLimit")
		path(d, "metadata", "annotations")["example.com/owner"] = "ops"
	})
	c := Diff(depID, Kubernetes, planned, live, live)
	if c.Action != Update {
		t.Fatalf("action %s", c.Action)
	}
	want := []FieldChange{
		{Path: `metadata.annotations["example.com/owner"]`, After: "ops"},
		{Path: `metadata.labels.team`, After: "payments"},
		{Path: `spec.replicas`, Before: int64(2), After: int64(3)},
		{Path: `spec.revisionHistoryLimit`, Before: int64(10)},
		{Path: `spec.template.metadata.labels["app.kubernetes.io/version"]`, After: "1.28"},
		{Path: `spec.template.spec.containers[0].image`, Before: "nginx:1.27", After: "nginx:1.28"},
	}
	if !reflect.DeepEqual(c.Fields, want) {
		t.Fatalf("fields:\n%#v\nwant\n%#v", c.Fields, want)
	}
	if c.Drifted {
		t.Error("drifted")
	}
	// The JSON form leaves absent sides out.
	b, err := json.Marshal(c.Fields[1])
	if err != nil || string(b) != `{"path":"metadata.labels.team","after":"payments"}` {
		t.Errorf("json = %s, %v", b, err)
	}
}

func TestDiffLists(t *testing.T) {
	live := &Resource{Attributes: map[string]any{"data": map[string]any{"key": "a"}, "ports": []any{80, 443}}}
	planned := &Resource{Attributes: map[string]any{"data": map[string]any{"key": "b"}, "ports": []any{80.0}}}
	c := Diff("t:f:x:y", Terraform, planned, live, nil)
	want := []FieldChange{
		{Path: "data.key", Before: "a", After: "b"},
		{Path: "ports[1]", Before: int64(443)},
	}
	if c.Action != Update || !reflect.DeepEqual(c.Fields, want) {
		t.Fatalf("Diff = %+v", c)
	}
}

func TestDiffDrift(t *testing.T) {
	prior := deployment(t, nil)
	live := deployment(t, func(d map[string]any) { path(d, "spec")["replicas"] = 5 }) // someone scaled it
	planned := deployment(t, nil)
	c := Diff(depID, Kubernetes, planned, live, prior)
	if !c.Drifted || c.Action != Update {
		t.Fatalf("Diff = %+v, want drifted update", c)
	}
	if len(c.Fields) != 1 || c.Fields[0].Path != "spec.replicas" || c.Fields[0].Before != int64(5) || c.Fields[0].After != int64(2) {
		t.Fatalf("fields %+v", c.Fields)
	}
	// A status-only difference is not drift.
	live = deployment(t, func(d map[string]any) { d["status"] = map[string]any{"replicas": 0} })
	if c := Diff(depID, Kubernetes, planned, live, prior); c.Drifted {
		t.Fatal("status change counted as drift")
	}
	// Deleted out of band: no live object, so no drift flag; the action says Create.
	if c := Diff(depID, Kubernetes, planned, nil, prior); c.Drifted || c.Action != Create {
		t.Fatalf("Diff = %+v", c)
	}
}

func TestKeySegment(t *testing.T) {
	cases := map[string]string{
		"spec": ".spec", "app_name": ".app_name", "max-surge": ".max-surge",
		"app.kubernetes.io/name": `["app.kubernetes.io/name"]`, "a/b": `["a/b"]`,
		"0": `["0"]`, "": `[""]`, "with space": `["with space"]`,
	}
	for k, want := range cases {
		if got := keySegment(k, false); got != want {
			t.Errorf("keySegment(%q) = %s, want %s", k, got, want)
		}
	}
	if got := keySegment("spec", true); got != "spec" {
		t.Errorf("root segment = %s", got)
	}
}

func TestDiffMissingObjectIsEmpty(t *testing.T) {
	live := &Resource{Attributes: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{}}}}
	planned := &Resource{Attributes: map[string]any{"metadata": map[string]any{"name": "x"}}}
	if c := Diff("v1:ConfigMap:x", Kubernetes, planned, live, live); c.Action != UnChanged {
		t.Fatalf("{} vs absent: %+v", c)
	}
	planned = &Resource{Attributes: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "1", "b": map[string]any{"c": true}}}}}
	c := Diff("v1:ConfigMap:x", Kubernetes, planned, &Resource{Attributes: map[string]any{"metadata": map[string]any{"name": "x"}}}, nil)
	want := []FieldChange{{Path: "metadata.labels.a", After: "1"}, {Path: "metadata.labels.b.c", After: true}}
	if !reflect.DeepEqual(c.Fields, want) {
		t.Fatalf("added object: %#v", c.Fields)
	}
	// And the other way round, a removed object.
	c = Diff("v1:ConfigMap:x", Kubernetes, &Resource{Attributes: map[string]any{"metadata": map[string]any{"name": "x"}}}, planned, nil)
	want = []FieldChange{{Path: "metadata.labels.a", Before: "1"}, {Path: "metadata.labels.b.c", Before: true}}
	if !reflect.DeepEqual(c.Fields, want) {
		t.Fatalf("removed object: %#v", c.Fields)
	}
}
