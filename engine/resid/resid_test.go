package resid

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, id, typ string
		want          ID
	}{
		{"namespaced, core group", "v1:Service:default:web", "",
			ID{Type: Kubernetes, APIVersion: "v1", Kind: "Service", Namespace: "default", Name: "web"}},
		{"namespaced, named group", "apps/v1:Deployment:default:web", "",
			ID{Type: Kubernetes, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}},
		{"cluster-scoped, core group", "v1:Namespace:demo", "",
			ID{Type: Kubernetes, APIVersion: "v1", Kind: "Namespace", Name: "demo"}},
		{"cluster-scoped, group with dots", "rbac.authorization.k8s.io/v1:ClusterRole:widget-operator", "",
			ID{Type: Kubernetes, APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "widget-operator"}},
		{"custom resource, name with dots", "apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com", "",
			ID{Type: Kubernetes, APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}},
		{"namespaced, type given", "example.com/v1beta1:Widget:team-a:sample", Kubernetes,
			ID{Type: Kubernetes, APIVersion: "example.com/v1beta1", Kind: "Widget", Namespace: "team-a", Name: "sample"}},
		{"terraform", "hashicorp:random:random_password:db", "",
			ID{Type: Terraform, ProviderNamespace: "hashicorp", ProviderName: "random", ResourceType: "random_password", Name: "db"}},
		{"terraform, type given", "builtin:terraform:terraform_data:db-seed", Terraform,
			ID{Type: Terraform, ProviderNamespace: "builtin", ProviderName: "terraform", ResourceType: "terraform_data", Name: "db-seed"}},
		// A caller that knows the type is not second-guessed by the kind's case.
		{"kubernetes, lower-case kind", "v1:configmap:demo:x", Kubernetes,
			ID{Type: Kubernetes, APIVersion: "v1", Kind: "configmap", Namespace: "demo", Name: "x"}},
		{"terraform, capitalised provider", "Acme:Cloud:cloud_db:x", Terraform,
			ID{Type: Terraform, ProviderNamespace: "Acme", ProviderName: "Cloud", ResourceType: "cloud_db", Name: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.id, tc.typ)
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q, %q) = %+v, %v; want %+v", tc.id, tc.typ, got, err, tc.want)
			}
			if got.ClusterScoped() != (tc.want.Type == Kubernetes && tc.want.Namespace == "") {
				t.Errorf("ClusterScoped() = %v", got.ClusterScoped())
			}
		})
	}
}

func TestParseRefusesMalformedIDs(t *testing.T) {
	for _, tc := range []struct {
		name, id, typ, want string
	}{
		{"empty", "", "", `resource ID "": 1 part; want apiVersion:kind[:namespace]:name (Kubernetes) or providerNamespace:providerName:resourceType:resourceName (Terraform)`},
		{"too few colons", "v1:Namespace", "", `resource ID "v1:Namespace": 2 parts; want apiVersion:kind[:namespace]:name`},
		{"too many colons", "apps/v1:Deployment:default:web:extra", "", `resource ID "apps/v1:Deployment:default:web:extra": 5 parts`},
		{"empty name", "v1:Namespace:", "", `resource ID "v1:Namespace:": part 3 of 3 is empty`},
		{"empty namespace", "v1:ConfigMap::x", "", `resource ID "v1:ConfigMap::x": part 3 of 4 is empty`},
		{"empty apiVersion", ":Service:default:web", Kubernetes, `resource ID ":Service:default:web": part 1 of 4 is empty`},
		{"empty kind", "v1::web", "", `resource ID "v1::web": part 2 of 3 is empty`},
		{"kubernetes, too few", "v1:x", Kubernetes, `resource ID "v1:x": 2 parts; want apiVersion:kind:namespace:name, or apiVersion:kind:name when cluster-scoped`},
		{"kubernetes, too many", "a:B:c:d:e", Kubernetes, `resource ID "a:B:c:d:e": 5 parts; want apiVersion:kind:namespace:name`},
		{"terraform, three parts", "hashicorp:local:x", Terraform, `resource ID "hashicorp:local:x": 3 parts; want providerNamespace:providerName:resourceType:resourceName`},
		{"terraform, empty type", "hashicorp:random::db", "", `resource ID "hashicorp:random::db": part 3 of 4 is empty`},
		{"unknown type", "v1:Namespace:demo", "Helm", `resource ID "v1:Namespace:demo": unknown resource type "Helm" (want Kubernetes or Terraform)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.id, tc.typ)
			if err == nil {
				t.Fatalf("Parse(%q, %q) = %+v, want an error", tc.id, tc.typ, got)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Parse(%q, %q): %v\nwant %s", tc.id, tc.typ, err, tc.want)
			}
		})
	}
}
