package engine

import "strings"

// A custom resource can only be applied once the CustomResourceDefinition of
// its kind is established. When both are in one spec, the CRD is an implicit
// dependency of the custom resource (see Graph), and a preview cannot dry-run
// the custom resource yet (see DefiningCRD).

// crdKinds maps a kind to the ID of the CRD in s that defines it.
func (s *Spec) crdKinds() map[groupKind]string {
	var kinds map[groupKind]string
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Type != Kubernetes || r.Attributes["kind"] != "CustomResourceDefinition" ||
			!strings.HasPrefix(str(r.Attributes["apiVersion"]), "apiextensions.k8s.io/") {
			continue
		}
		spec, _ := r.Attributes["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, kind := str(spec["group"]), str(names["kind"])
		if group == "" || kind == "" {
			continue
		}
		if kinds == nil {
			kinds = map[groupKind]string{}
		}
		kinds[groupKind{group, kind}] = r.ID
	}
	return kinds
}

// resourceKind is the kind of a Kubernetes resource's object (zero for others).
func resourceKind(r *Resource) groupKind {
	if r.Type != Kubernetes {
		return groupKind{}
	}
	return groupKindOf(str(r.Attributes["apiVersion"]), str(r.Attributes["kind"]))
}

// DefiningCRD returns the ID of the CustomResourceDefinition in s that
// defines r's kind, "" when s has none.
func (s *Spec) DefiningCRD(r *Resource) string {
	return s.crdKinds()[resourceKind(r)]
}
