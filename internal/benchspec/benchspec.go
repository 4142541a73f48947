// Package benchspec builds the specs kumo's benchmarks apply: a Namespace and
// ConfigMaps in it, flat or chained, so the Go benchmarks and `make bench`
// (which also applies the same objects by raw server-side apply) measure the
// same thing.
package benchspec

import (
	"fmt"
	"maps"

	"github.com/kumoproj/kumo/engine"
)

// ConfigMaps is a Namespace ns and n ConfigMaps that depend on it (flat) or
// each on the one before (chain). Resources[0] is the Namespace.
func ConfigMaps(ns string, n int, chain bool) *engine.Spec {
	nsID := engine.KubernetesID("v1", "Namespace", "", ns)
	spec := &engine.Spec{Resources: []engine.Resource{{
		ID: nsID, Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}},
	}}}
	prev := nsID
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("cm-%05d", i)
		id := engine.KubernetesID("v1", "ConfigMap", ns, name)
		spec.Resources = append(spec.Resources, engine.Resource{
			ID: id, Type: engine.Kubernetes, DependsOn: []string{prev},
			Attributes: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"data":     map[string]any{"index": fmt.Sprint(i)},
			},
		})
		if chain {
			prev = id
		}
	}
	return spec
}

// Updated is spec with every ConfigMap's value changed (data.index gets the
// suffix "-"+version): an update of every object that keeps its keys, as a
// new release of the same configuration is. spec is not changed.
func Updated(spec *engine.Spec, version string) *engine.Spec {
	out := &engine.Spec{Resources: make([]engine.Resource, len(spec.Resources))}
	for i, r := range spec.Resources {
		out.Resources[i] = r
		data, ok := r.Attributes["data"].(map[string]any)
		if !ok {
			continue
		}
		attrs := maps.Clone(r.Attributes)
		newData := maps.Clone(data)
		newData["index"] = fmt.Sprint(data["index"]) + "-" + version
		attrs["data"] = newData
		out.Resources[i].Attributes = attrs
	}
	return out
}
