package resid

import (
	"strings"
	"testing"
)

func TestParseTargetForms(t *testing.T) {
	for _, tc := range []struct {
		addr, id, typ string
		want          bool
	}{
		{"apps/v1:Deployment:demo:web", "apps/v1:Deployment:demo:web", "", true},
		{"apps/v1:Deployment:demo:web", "apps/v1:Deployment:demo:web2", "", false},
		{"Deployment/web", "apps/v1:Deployment:demo:web", "Kubernetes", true},
		{"deployment/web", "apps/v1:Deployment:other:web", "Kubernetes", true},
		{"Deployment/web", "v1:Service:demo:web", "Kubernetes", false},
		{"Deployment/web-*", "apps/v1:Deployment:demo:web-1", "", true},
		{"Deployment/web-*", "apps/v1:Deployment:demo:api", "", false},
		{"Namespace/demo", "v1:Namespace:demo", "", true},
		{"random_password/db", "hashicorp:random:random_password:db", "Terraform", true},
		{"apps/v1:Deployment:demo:*", "apps/v1:Deployment:demo:web", "", true},
		{"apps/v1:Deployment:demo:*", "apps/v1:Deployment:prod:web", "", false},
		{"*:ConfigMap:demo:*", "v1:ConfigMap:demo:cfg", "", true},
		{"*:ConfigMap:demo:c?g", "v1:ConfigMap:demo:cfg", "", true},
		{"*:ConfigMap:demo:c?g", "v1:ConfigMap:demo:cfgg", "", false},
	} {
		tg, err := ParseTarget(tc.addr)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", tc.addr, err)
		}
		if got := tg.Matches(tc.id, tc.typ); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.addr, tc.id, got, tc.want)
		}
	}
}

func TestParseTargetRefusesBadAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"":                  "empty",
		"web":               "want a resource ID",
		"a/b/c":             "want a resource ID",
		"/web":              "needs both parts",
		"Deploy*/web":       "may not be a glob",
		"v1:Service":        "2 parts",
		"v1:Service:[ab]:x": "only '*' and '?'",
		"v1::demo:x":        "empty",
	} {
		_, err := ParseTarget(addr)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), addr) {
			t.Errorf("ParseTarget(%q) = %v, want an error naming it and saying %q", addr, err, want)
		}
	}
}

func TestGlobManyStars(t *testing.T) {
	if glob(strings.Repeat("*a", 30)+"b", strings.Repeat("a", 200)) {
		t.Fatal("matched without the final b")
	}
}
