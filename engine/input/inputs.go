package input

import (
	"fmt"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// File is one file given to kumo (or standard input, named "-" or "<stdin>").
type File struct {
	Name string
	Data []byte
}

// ReadInputs reads what `kumo apply -f` was given: either one Spec (one input
// holding one document with "resources", as ParseSpec reads it), or any number of
// plain Kubernetes objects, converted by engine.ManifestSpec with namespace for the
// objects that have none. manifests reports which it was. Mixing the two, or
// inputs with nothing in them, is an error.
func ReadInputs(files []File, namespace string) (spec *engine.Spec, manifests bool, err error) {
	var objs []engine.ManifestObject
	var specAt string
	for _, in := range files {
		docs, err := splitDocuments(in.Data, in.Name)
		if err != nil {
			return nil, false, err
		}
		for _, d := range docs {
			var top any
			if err := decodeJSON(d.json, &top, false); err != nil {
				return nil, false, fmt.Errorf("%s: %s", d.where(), jsonErrorText(err))
			}
			if err := d.checkValues(top); err != nil {
				return nil, false, err
			}
			m, ok := top.(map[string]any)
			switch {
			case !ok:
				return nil, false, fmt.Errorf("%s: not an object: want a Kubernetes object or a Spec", d.where())
			case m["apiVersion"] != nil || m["kind"] != nil:
				objs = append(objs, engine.ManifestObject{Where: d.where(), Object: normalizeMap(m)})
			case m["resources"] != nil:
				if specAt != "" {
					return nil, false, fmt.Errorf("%s and %s are both Specs: give one Spec, or plain Kubernetes manifests", specAt, d.where())
				}
				specAt = d.where()
				spec, err = parseSpecJSON(d.json, in.Name)
				if err != nil {
					return nil, false, err
				}
			default:
				return nil, false, fmt.Errorf("%s: neither a Kubernetes object (apiVersion, kind) nor a Spec (resources)", d.where())
			}
		}
	}
	switch {
	case specAt != "" && len(objs) > 0:
		return nil, false, fmt.Errorf("%s is a Spec but %s is a Kubernetes object: give one Spec, or plain Kubernetes manifests", specAt, objs[0].Where)
	case specAt != "":
		return spec, false, nil
	case len(objs) == 0:
		names := make([]string, len(files))
		for i, in := range files {
			names[i] = in.Name
		}
		return nil, false, fmt.Errorf("%s: no Kubernetes objects and no Spec", strings.Join(names, ", "))
	}
	spec, err = engine.ManifestSpec(objs, namespace)
	return spec, true, err
}
