package drift

import (
	"reflect"
	"testing"
)

// An apply keeps what the ignore rules select as it is live: replicas an HPA
// scales (by pointer), resources a VPA sets (by field manager); desired is
// not changed, fields kumo does not set are not added, names never taken.
func TestRespectIgnored(t *testing.T) {
	desired := func() map[string]any {
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop"},
			"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:2", "resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}},
			}}}},
		}
	}
	vpaSet := map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{
		`k:{"name":"app"}`: map[string]any{"f:resources": map[string]any{"f:requests": map[string]any{"f:cpu": map[string]any{}}}},
	}}}}}
	live := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "managedFields": []any{entry("vpa-updater", "Update", vpaSet)}},
		"spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "image": "nginx:1", "resources": map[string]any{"requests": map[string]any{"cpu": "250m"}}},
		}}}},
	}
	c := Config{Ignore: []Rule{
		{Kind: "Deployment", JSONPointers: []string{"/spec/replicas", "/spec/paused", "/metadata/name"}},
		{Kind: "Deployment", ManagedFieldsManagers: []string{"vpa-updater"}},
		{Kind: "StatefulSet", JSONPointers: []string{"/spec/template"}},
	}}
	in := desired()
	got := c.RespectIgnored("apps/v1:Deployment:shop:web", "Kubernetes", in, live)
	want := desired()
	want["spec"].(map[string]any)["replicas"] = int64(5)
	want["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "250m"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if !reflect.DeepEqual(in, desired()) {
		t.Errorf("desired was changed: %v", in)
	}
	if got := c.RespectIgnored("apps/v1:Deployment:shop:web", "Kubernetes", desired(), nil); !reflect.DeepEqual(got, desired()) {
		t.Errorf("a create: %v, want desired", got)
	}
	if got := c.RespectIgnored("v1:ConfigMap:shop:web", "Kubernetes", desired(), live); !reflect.DeepEqual(got, desired()) {
		t.Errorf("no rule selects it: %v, want desired", got)
	}
}
