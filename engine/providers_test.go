package engine

import "testing"

func TestProviderAllowed(t *testing.T) {
	p := func(s string) TerraformProvider {
		t.Helper()
		out, err := parseProvider(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	patterns := []string{"registry.terraform.io/hashicorp/*", "registry.example.com/*", "mirror.local/acme/thing"}
	for source, want := range map[string]bool{
		"registry.terraform.io/hashicorp/local/1.4.0":  true,
		"registry.terraform.io/kumoproj/kumotest":      false,
		"registry.example.com/anyone/anything":         true,
		"mirror.local/acme/thing/2.0.0":                true,
		"mirror.local/acme/other":                      false,
		"evil.example.com/hashicorp/local":             false,
		"terraform.io/builtin/terraform":               true, // built in: nothing downloaded
		"registry.terraform.io.evil.com/hashicorp/aws": false,
	} {
		if got := ProviderAllowed(patterns, p(source)); got != want {
			t.Errorf("ProviderAllowed(%s) = %v, want %v", source, got, want)
		}
	}
	if ProviderAllowed(nil, p("registry.terraform.io/hashicorp/local")) {
		t.Error("an empty list allowed a provider")
	}
}

func TestCheckProviderPatterns(t *testing.T) {
	if err := CheckProviderPatterns([]string{"registry.terraform.io/hashicorp/*", "h/*", "h/n/p*"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"registry.terraform.io", "h/n", "h//x", "h/n/p/1.0", "h/[/x"} {
		if err := CheckProviderPatterns([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestProviderHostsInUse(t *testing.T) {
	tf := func(source string) Resource {
		return Resource{ID: "x", Type: Terraform, Extensions: map[string]any{ExtProvider: source}}
	}
	got := ProviderHostsInUse([]Resource{
		tf("registry.opentofu.org/hashicorp/local/1.4.0"), tf("registry.terraform.io/kumoproj/kumotest"),
		tf("terraform.io/builtin/terraform"), tf("registry.opentofu.org/x/y"), {ID: "v1:Namespace:a", Type: Kubernetes},
	})
	want := []string{"registry.opentofu.org/*", "registry.terraform.io/*"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("hosts in use = %v, want %v", got, want)
	}
}
