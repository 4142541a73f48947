package release

import (
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

func TestDriftOfASecretIsMasked(t *testing.T) {
	r := &engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	res := drift.Result{ID: r.ID, Fields: []drift.Field{
		{Path: "/data/password", Recorded: "old", Live: "new"},
		{Path: "/metadata/labels/app", Recorded: "a", Live: "b"},
	}, Ignored: []drift.Field{{Path: "/stringData/x", Recorded: "old"}}}
	maskDrift(&res, r)
	if f := res.Fields[0]; f.Recorded != engine.Masked || f.Live != engine.Masked {
		t.Errorf("secret field: %+v", f)
	}
	if f := res.Fields[1]; f.Recorded != "a" || f.Live != "b" {
		t.Errorf("a label was masked: %+v", f)
	}
	if f := res.Ignored[0]; f.Recorded != engine.Masked || f.Live != nil {
		t.Errorf("ignored secret field: %+v", f)
	}
}
