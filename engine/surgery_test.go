package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

func cmRes(name string, deps ...string) Resource {
	return Resource{ID: "v1:ConfigMap:ns:" + name, Type: Kubernetes, DependsOn: deps,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns"}}}
}

func TestPlanForget(t *testing.T) {
	a, b := cmRes("a"), cmRes("b", "v1:ConfigMap:ns:a")
	spec := &Spec{Resources: []Resource{a, b}}
	state := &State{Resources: []Resource{a, b}}
	plan, err := PlanSurgery(Surgery{Forget: []string{a.ID}}, spec, state, "revision 1 of p/w")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Spec.Resources) != 1 || plan.Spec.Resources[0].ID != b.ID || len(plan.Spec.Resources[0].DependsOn) != 0 {
		t.Errorf("spec = %+v, want b alone, without its dependency on a", plan.Spec.Resources)
	}
	if len(spec.Resources[1].DependsOn) != 1 {
		t.Error("PlanSurgery changed the prior spec")
	}
	if len(plan.Records) != 2 || plan.Records[0].ID != a.ID || plan.Records[0].Resource != nil ||
		plan.Records[1].ID != b.ID || plan.Records[1].Resource == nil || len(plan.Records[1].Resource.DependsOn) != 0 {
		t.Errorf("records = %+v, want a dropped and b without the dependency", plan.Records)
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Action != Forget || plan.Changes[0].ID != a.ID {
		t.Errorf("changes = %+v", plan.Changes)
	}
}

func TestPlanSurgeryRefusals(t *testing.T) {
	a := cmRes("a")
	ref := cmRes("r")
	ref.Attributes["data"] = map[string]any{"x": "$kumo_path.v1:ConfigMap:ns:a.metadata.uid"}
	spec := &Spec{Resources: []Resource{a, ref}}
	state := &State{Resources: []Resource{a, ref}}
	tf := Resource{ID: "hashicorp:terraform:terraform_data:old", Type: Terraform}
	for _, c := range []struct {
		s    Surgery
		want string
	}{
		{Surgery{Forget: []string{"v1:ConfigMap:ns:nope"}}, "forget: v1:ConfigMap:ns:nope not recorded in revision 1 of p/w"},
		{Surgery{Forget: []string{a.ID}}, "forget v1:ConfigMap:ns:a: v1:ConfigMap:ns:r refers to it"},
		{Surgery{Move: &Moved{From: "v1:ConfigMap:ns:nope", To: "v2:ConfigMap:ns:nope"}}, "v1:ConfigMap:ns:nope is not recorded"},
		{Surgery{Move: &Moved{From: a.ID, To: ref.ID}}, "v1:ConfigMap:ns:r already exists in revision 1 of p/w"},
		{Surgery{Move: &Moved{From: a.ID, To: "v1:ConfigMap:ns:b"}}, "a Kubernetes object cannot be renamed"},
		{Surgery{Move: &Moved{From: a.ID, To: "v1:Secret:ns:a"}}, "a Kubernetes object cannot be renamed"},
		{Surgery{Move: &Moved{From: a.ID, To: a.ID}}, "the two IDs are the same"},
		{Surgery{Move: &Moved{From: tf.ID, To: "hashicorp:terraform:other_type:new"}}, "not the same kind of Terraform resource"},
		{Surgery{}, "nothing to forget or move"},
		{Surgery{Forget: []string{"no-colons"}}, `resource ID "no-colons"`},
	} {
		st := &State{Resources: append(state.Resources, tf)}
		_, err := PlanSurgery(c.s, spec, st, "revision 1 of p/w")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.s, err, c.want)
		}
	}
}

func TestPlanMoveKubernetesAPIVersion(t *testing.T) {
	hpa := Resource{ID: "autoscaling/v1:HorizontalPodAutoscaler:ns:web", Type: Kubernetes,
		Attributes: map[string]any{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web", "namespace": "ns"}}}
	user := cmRes("u", hpa.ID)
	user.Attributes["data"] = map[string]any{"uid": "$kumo_path." + hpa.ID + ".metadata.uid", "other": "not a ref: " + hpa.ID + ".metadata.uid"}
	spec := &Spec{Resources: []Resource{hpa, user}}
	state := &State{Resources: []Resource{hpa, user}}
	to := "autoscaling/v2:HorizontalPodAutoscaler:ns:web"
	plan, err := PlanSurgery(Surgery{Move: &Moved{From: hpa.ID, To: to}}, spec, state, "revision 1 of p/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Spec.Validate(); err != nil {
		t.Fatalf("the moved spec does not validate: %v", err)
	}
	got := plan.Spec.Resources
	if got[0].ID != to || got[0].Attributes["apiVersion"] != "autoscaling/v2" || hpa.Attributes["apiVersion"] != "autoscaling/v1" {
		t.Errorf("moved = %+v (prior %v)", got[0], hpa.Attributes["apiVersion"])
	}
	data := got[1].Attributes["data"].(map[string]any)
	if got[1].DependsOn[0] != to || data["uid"] != "$kumo_path."+to+".metadata.uid" || data["other"] != "not a ref: "+hpa.ID+".metadata.uid" {
		t.Errorf("dependent = %+v, want its dependency and reference on %s, the other string untouched", got[1], to)
	}
	if len(plan.Records) != 3 || plan.Records[0].ID != hpa.ID || plan.Records[0].Resource != nil ||
		plan.Records[1].ID != to || plan.Records[1].Resource.ID != to || plan.Records[2].Resource.DependsOn[0] != to {
		t.Errorf("records = %+v", plan.Records)
	}
	if len(plan.Changes) != 1 || plan.Changes[0].Action != Move || plan.Changes[0].ID != to || !strings.Contains(plan.Changes[0].Fields[0].Path, hpa.ID) {
		t.Errorf("changes = %+v", plan.Changes)
	}
}

func TestPlanMoveTerraformRewritesItsState(t *testing.T) {
	st := `{"version": 4, "terraform_version": "1.5.7", "serial": 3, "lineage": "l", "outputs": {},
"resources": [{"mode": "managed", "type": "terraform_data", "name": "old", "provider": "provider[\"terraform.io/builtin/terraform\"]",
"instances": [{"schema_version": 0, "attributes": {"id": "4b6c-big-1234567890123456789"}}]}]}`
	old := Resource{ID: "hashicorp:terraform:terraform_data:old", Type: Terraform, Extensions: map[string]any{ExtTerraformState: st}}
	plan, err := PlanSurgery(Surgery{Move: &Moved{From: old.ID, To: "hashicorp:terraform:terraform_data:new"}},
		&Spec{Resources: []Resource{{ID: old.ID, Type: Terraform}}}, &State{Resources: []Resource{old}}, "r")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Serial    int `json:"serial"`
		Lineage   string
		Resources []struct {
			Name      string
			Instances []struct {
				Attributes map[string]any
			}
		}
	}
	moved := plan.Records[1].Resource
	if err := json.Unmarshal([]byte(moved.Extensions[ExtTerraformState].(string)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Serial != 4 || got.Lineage != "l" || len(got.Resources) != 1 || got.Resources[0].Name != "new" ||
		got.Resources[0].Instances[0].Attributes["id"] != "4b6c-big-1234567890123456789" {
		t.Errorf("moved state = %+v", got)
	}
	if old.Extensions[ExtTerraformState] != st {
		t.Error("the prior record's state was changed")
	}
	if _, err := PlanSurgery(Surgery{Move: &Moved{From: old.ID, To: "hashicorp:terraform:terraform_data:9bad"}},
		&Spec{}, &State{Resources: []Resource{old}}, "r"); err == nil || !strings.Contains(err.Error(), "not a Terraform name") {
		t.Errorf("a bad name: %v", err)
	}
}
