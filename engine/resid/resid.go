package resid

import (
	"fmt"
	"strings"
)

// The resource types an ID can belong to, spelled as engine.Type spells them.
const (
	Kubernetes = "Kubernetes"
	Terraform  = "Terraform"
)

// ID is a resource ID split into its parts. Type says which parts are set:
// APIVersion, Kind, Namespace (empty when cluster-scoped) and Name for a
// Kubernetes ID; ProviderNamespace, ProviderName, ResourceType and Name (the
// resource name) for a Terraform one.
type ID struct {
	Type string

	APIVersion, Kind, Namespace string

	ProviderNamespace, ProviderName, ResourceType string

	Name string
}

// ClusterScoped reports whether the ID is a Kubernetes one without a namespace.
func (id ID) ClusterScoped() bool { return id.Type == Kubernetes && id.Namespace == "" }

// Parse splits id, the ID of a resource of type typ (Kubernetes or Terraform).
// With typ empty it tells the type from the ID: three parts are a
// cluster-scoped Kubernetes object; of four, a second part starting with a
// capital letter is a Kubernetes kind (ConfigMap), any other a Terraform
// provider name (random; the registry's names are lower case). Every part must
// be non-empty. Errors name the ID.
func Parse(id, typ string) (ID, error) {
	parts := strings.Split(id, ":")
	if typ == "" {
		typ = guessType(parts)
	}
	switch typ {
	case Kubernetes:
		if len(parts) != 3 && len(parts) != 4 {
			return ID{}, fmt.Errorf("resource ID %q: %s; want apiVersion:kind:namespace:name, or apiVersion:kind:name when cluster-scoped", id, count(parts))
		}
	case Terraform:
		if len(parts) != 4 {
			return ID{}, fmt.Errorf("resource ID %q: %s; want providerNamespace:providerName:resourceType:resourceName", id, count(parts))
		}
	case "":
		return ID{}, fmt.Errorf("resource ID %q: %s; want apiVersion:kind[:namespace]:name (Kubernetes) or providerNamespace:providerName:resourceType:resourceName (Terraform)", id, count(parts))
	default:
		return ID{}, fmt.Errorf("resource ID %q: unknown resource type %q (want %s or %s)", id, typ, Kubernetes, Terraform)
	}
	for i, p := range parts {
		if p == "" {
			return ID{}, fmt.Errorf("resource ID %q: part %d of %d is empty", id, i+1, len(parts))
		}
	}
	switch {
	case typ == Terraform:
		return ID{Type: Terraform, ProviderNamespace: parts[0], ProviderName: parts[1], ResourceType: parts[2], Name: parts[3]}, nil
	case len(parts) == 3:
		return ID{Type: Kubernetes, APIVersion: parts[0], Kind: parts[1], Name: parts[2]}, nil
	}
	return ID{Type: Kubernetes, APIVersion: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}, nil
}

// guessType is the type of an ID of these parts, or "" when its shape fits
// neither.
func guessType(parts []string) string {
	switch {
	case len(parts) == 3:
		return Kubernetes
	case len(parts) != 4:
		return ""
	case parts[1] != "" && parts[1][0] >= 'A' && parts[1][0] <= 'Z':
		return Kubernetes
	}
	return Terraform
}

// count says how many parts an ID has: "2 parts", "1 part".
func count(parts []string) string {
	if len(parts) == 1 {
		return "1 part"
	}
	return fmt.Sprintf("%d parts", len(parts))
}
