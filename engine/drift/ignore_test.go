package drift

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		rule Rule
		want string // "" for valid
	}{
		{"pointer", Rule{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}, ""},
		{"manager", Rule{ID: "apps/v1:Deployment:*", ManagedFieldsManagers: []string{"hpa-controller"}}, ""},
		{"no selector", Rule{JSONPointers: []string{"/spec"}}, "no resource selector"},
		{"both selectors", Rule{ID: "x", Kind: "y", JSONPointers: []string{"/spec"}}, "use one"},
		{"nothing ignored", Rule{Kind: "Deployment"}, "nothing to ignore"},
		{"relative pointer", Rule{Kind: "Deployment", JSONPointers: []string{"spec/replicas"}}, `jsonPointers[0] "spec/replicas": a JSON pointer starts with /`},
		{"bad escape", Rule{Kind: "Deployment", JSONPointers: []string{"/a~2b"}}, "'~' must be followed"},
		{"bad glob", Rule{ID: "[", JSONPointers: []string{"/a"}}, "not a valid glob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Config{Ignore: []Rule{{Kind: "ok", JSONPointers: []string{"/x"}}, tc.rule}}.Validate("workspace dev.yaml")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "workspace dev.yaml: drift.ignore[1]: ") {
				t.Errorf("error %v, want one naming the file, drift.ignore[1] and %q", err, tc.want)
			}
		})
	}
}

func TestConfigApply(t *testing.T) {
	fields := func() []Field {
		return []Field{
			{Path: "/spec/replicas", Manager: "kube-controller-manager"},
			{Path: "/spec/template/spec/containers/0/image", Manager: "kubectl-set"},
		}
	}
	tests := []struct {
		name        string
		rules       []Rule
		id          string
		wantStatus  Status
		wantFields  int
		wantIgnored int
	}{
		{"pointer by kind", []Rule{{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}, "apps/v1:Deployment:demo:web", Drifted, 1, 1},
		{"pointer prefix", []Rule{{Kind: "Deployment", JSONPointers: []string{"/spec"}}}, "apps/v1:Deployment:demo:web", InSync, 0, 2},
		{"pointer is not a string prefix", []Rule{{Kind: "Deployment", JSONPointers: []string{"/spec/rep"}}}, "apps/v1:Deployment:demo:web", Drifted, 2, 0},
		{"manager", []Rule{{Name: "web", ManagedFieldsManagers: []string{"kube-controller-manager"}}}, "apps/v1:Deployment:demo:web", Drifted, 1, 1},
		{"other namespace", []Rule{{Namespace: "prod", JSONPointers: []string{"/spec"}}}, "apps/v1:Deployment:demo:web", Drifted, 2, 0},
		{"id glob", []Rule{{ID: "apps/v1:Deployment:demo:*", JSONPointers: []string{"/spec"}}}, "apps/v1:Deployment:demo:web", InSync, 0, 2},
		{"terraform id by kind never", []Rule{{Kind: "*", JSONPointers: []string{"/spec"}}}, "hashicorp:local:local_file:f", Drifted, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ := "Kubernetes"
			if strings.HasPrefix(tc.id, "hashicorp:") {
				typ = "Terraform"
			}
			res := Result{ID: tc.id, Type: typ, Status: Drifted, Fields: fields()}
			Config{Ignore: tc.rules}.Apply(&res)
			if res.Status != tc.wantStatus || len(res.Fields) != tc.wantFields || len(res.Ignored) != tc.wantIgnored {
				t.Errorf("status %s, %d fields, %d ignored; want %s, %d, %d", res.Status, len(res.Fields), len(res.Ignored), tc.wantStatus, tc.wantFields, tc.wantIgnored)
			}
			for _, f := range res.Ignored {
				if f.IgnoredBy != "drift.ignore[0]" {
					t.Errorf("ignored field %s names rule %q", f.Path, f.IgnoredBy)
				}
			}
		})
	}
}
