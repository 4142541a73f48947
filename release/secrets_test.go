package release

import (
	"encoding/base64"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// A drift check compares live with the values recorded at apply: each
// reference of the spec's Secret takes the recorded value (a stringData
// value is recorded in data, as the apiserver keeps it); one with no
// recorded value stays as written, and other values are untouched.
func TestWithRecordedSecrets(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	desired := &engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "demo"},
		"data":       map[string]any{"password": b64("ref://apps/db/password"), "plain": b64("x")},
		"stringData": map[string]any{"user": "ref://apps/db/user", "gone": "ref://apps/db/gone"},
	}}
	recorded := &engine.Resource{ID: desired.ID, Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "demo"},
		"data": map[string]any{"password": b64("pw"), "plain": b64("x"), "user": b64("app")},
	}}
	got := withRecordedSecrets(desired, recorded)
	data, sd := got.Attributes["data"].(map[string]any), got.Attributes["stringData"].(map[string]any)
	if data["password"] != b64("pw") || data["plain"] != b64("x") || sd["user"] != "app" || sd["gone"] != "ref://apps/db/gone" {
		t.Errorf("data %v, stringData %v", data, sd)
	}
	if desired.Attributes["stringData"].(map[string]any)["user"] != "ref://apps/db/user" {
		t.Error("the spec's resource was changed")
	}
	cm := &engine.Resource{ID: "v1:ConfigMap:demo:c", Type: engine.Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	if withRecordedSecrets(cm, recorded) != cm {
		t.Error("a resource without references was copied")
	}
}
