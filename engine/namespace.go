package engine

// CreatesNamespace reports whether s has the Kubernetes Namespace ns: objects
// into it can be applied once it is (kinds are applied in tiers, Namespaces
// first), though the cluster does not have it yet.
func (s *Spec) CreatesNamespace(ns string) bool {
	for i := range s.Resources {
		r := &s.Resources[i]
		if resourceKind(r) == (groupKind{"", "Namespace"}) && metadataName(r) == ns {
			return true
		}
	}
	return false
}

func metadataName(r *Resource) string {
	md, _ := r.Attributes["metadata"].(map[string]any)
	return str(md["name"])
}
