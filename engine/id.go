package engine

import (
	"fmt"
	"strings"
)

// KubernetesID returns the resource ID of a Kubernetes object:
// apiVersion:kind:namespace:name, or apiVersion:kind:name when namespace is empty
// (cluster-scoped objects), e.g. "apps/v1:Deployment:default:web", "v1:Namespace:demo".
// resid.Parse reads it back.
func KubernetesID(apiVersion, kind, namespace, name string) string {
	if namespace == "" {
		return apiVersion + ":" + kind + ":" + name
	}
	return apiVersion + ":" + kind + ":" + namespace + ":" + name
}

// KubernetesIDOf returns the resource ID of a Kubernetes object given as an
// unstructured map, from apiVersion, kind, metadata.namespace and metadata.name. It
// fails when apiVersion, kind or metadata.name is missing or not a string.
func KubernetesIDOf(obj map[string]any) (string, error) {
	var missing []string
	str := func(v any, field string) string {
		s, ok := v.(string)
		if !ok || s == "" {
			missing = append(missing, field)
		}
		return s
	}
	apiVersion := str(obj["apiVersion"], "apiVersion")
	kind := str(obj["kind"], "kind")
	meta, _ := obj["metadata"].(map[string]any)
	name := str(meta["name"], "metadata.name")
	namespace, _ := meta["namespace"].(string)
	if len(missing) > 0 {
		return "", fmt.Errorf("kubernetes object without %s", strings.Join(missing, ", "))
	}
	return KubernetesID(apiVersion, kind, namespace, name), nil
}
