package engine

import (
	"fmt"
	"slices"
	"strings"
)

// KusionSecretRefPrefix starts a Kusion secret-store reference: "ref://path/key",
// which Kusion replaces with the value it fetches from the secretStore provider
// (aws, vault, azure, alicloud, ...) named by the spec or workspace.
const KusionSecretRefPrefix = "ref://"

// SecretStoreRefs reports every value of s that Kusion would resolve through a
// secret store, one error per value, naming the resource and field, e.g.
//
//	v1:Secret:demo:db: stringData.password: "ref://..." refers to a Kusion secret store, ...
//
// kumo has no secret stores yet, so applying such a spec would write the reference
// itself as the secret's value; refusing it is the only safe answer. Kusion resolves
// references only as whole values of a v1 Secret's data and stringData, so only those
// are refused: a ConfigMap value or an annotation that merely contains "ref://" is
// ordinary text to Kusion and to kumo. The reference itself is not printed: its path
// names where the secret lives, which is of no use in the error and need not be logged.
func (s *Spec) SecretStoreRefs() []error {
	var errs []error
	store := secretStoreProviders(s.SecretStore)
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Type != Kubernetes || r.Attributes == nil {
			continue
		}
		if apiVersion, _ := r.Attributes["apiVersion"].(string); apiVersion != "v1" {
			continue
		}
		if kind, _ := r.Attributes["kind"].(string); kind != "Secret" {
			continue
		}
		name := r.ID
		if name == "" {
			name = fmt.Sprintf("resources[%d]", i)
		}
		for _, field := range []string{"data", "stringData"} {
			m, _ := r.Attributes[field].(map[string]any)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v, _ := m[k].(string)
				if !strings.HasPrefix(strings.TrimSpace(v), KusionSecretRefPrefix) {
					continue
				}
				errs = append(errs, fmt.Errorf("%s: %s.%s: %q refers to a Kusion secret store%s, which kumo does not support yet; put the value in a kumo secret instead",
					name, field, k, KusionSecretRefPrefix+"...", store))
			}
		}
	}
	return errs
}

// secretStoreProviders describes a spec's top-level secretStore for an error:
// " (secretStore provider aws)", or "" when the spec has none.
func secretStoreProviders(store any) string {
	m, ok := store.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	p, _ := m["provider"].(map[string]any)
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return " (the spec has a secretStore)"
	}
	return fmt.Sprintf(" (the spec's secretStore, provider %s)", strings.Join(names, ", "))
}
