package engine

import "strings"

// A custom resource can only be applied once the CustomResourceDefinition of
// its kind is established. When both are in one spec, the CRD is an implicit
// dependency of the custom resource (see Graph), and a preview cannot dry-run
// the custom resource yet (see DefiningCRD).

// crdKinds maps "group/Kind" to the ID of the CRD in s that defines it.
func (s *Spec) crdKinds() map[string]string {
	var kinds map[string]string
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
			kinds = map[string]string{}
		}
		kinds[group+"/"+kind] = r.ID
	}
	return kinds
}

// groupKind is "group/Kind" of a Kubernetes resource's object ("" for others).
func groupKind(r *Resource) string {
	if r.Type != Kubernetes {
		return ""
	}
	apiVersion, kind := str(r.Attributes["apiVersion"]), str(r.Attributes["kind"])
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return group + "/" + kind
}

// DefiningCRD returns the ID of the CustomResourceDefinition in s that
// defines r's kind, "" when s has none.
func (s *Spec) DefiningCRD(r *Resource) string {
	return s.crdKinds()[groupKind(r)]
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
