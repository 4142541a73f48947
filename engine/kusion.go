package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Extensions Kusion defines on a Kubernetes resource. Other extensions are kept
// as they are and round-trip through releases unchanged.
const (
	// ExtGVK is the object's group, version and kind as Go's schema.GroupVersionKind
	// prints it: "apps/v1, Kind=Deployment", for the core group "/v1, Kind=Namespace".
	ExtGVK = "GVK"
	// ExtIsWorkload marks the application's workload (a boolean, or "true"/"false").
	ExtIsWorkload = "kusion.io/is-workload"
	// ExtKubeConfig is the kubeconfig file of the cluster the object belongs to, so
	// that one spec can span clusters; empty or absent means the run's cluster.
	ExtKubeConfig = "kubeConfig"
	// ExtHealthPolicy is Kusion's health check of the resource; kumo keeps it.
	ExtHealthPolicy = "healthPolicy"
)

// ParseGVK reads an ExtGVK value into an apiVersion and a kind:
// "apps/v1, Kind=Deployment" gives "apps/v1" and "Deployment", "/v1, Kind=Namespace"
// gives "v1" and "Namespace".
func ParseGVK(s string) (apiVersion, kind string, err error) {
	gv, k, ok := strings.Cut(s, ", Kind=")
	if !ok || k == "" || gv == "" || strings.ContainsAny(k, " ,=") {
		return "", "", fmt.Errorf("GVK %q: want \"group/version, Kind=Kind\" (\"/v1, Kind=Namespace\" for the core group)", s)
	}
	group, version, ok := strings.Cut(gv, "/")
	if !ok || version == "" || strings.Contains(version, "/") {
		return "", "", fmt.Errorf("GVK %q: want \"group/version, Kind=Kind\" (\"/v1, Kind=Namespace\" for the core group)", s)
	}
	if group == "" {
		return version, k, nil
	}
	return gv, k, nil
}

// IsWorkload reports whether r carries ExtIsWorkload set to true (the boolean or
// the string "true"). A value of another kind is an error.
func IsWorkload(r *Resource) (bool, error) {
	switch v := r.Extensions[ExtIsWorkload].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("extensions.%q: %q is not a boolean", ExtIsWorkload, v)
		}
		return b, nil
	default:
		return false, fmt.Errorf("extensions.%q: %v is not a boolean", ExtIsWorkload, v)
	}
}

// KubeConfig returns r's ExtKubeConfig, "" when absent or empty.
func KubeConfig(r *Resource) string {
	s, _ := r.Extensions[ExtKubeConfig].(string)
	return s
}

// checkKubernetesExtensions reports the Kusion extensions of a Kubernetes
// resource that are malformed or disagree with its object.
func checkKubernetesExtensions(r *Resource) []error {
	var errs []error
	if v, ok := r.Extensions[ExtGVK]; ok && v != nil && v != "" {
		s, isStr := v.(string)
		apiVersion, kind, err := ParseGVK(s)
		switch {
		case !isStr:
			errs = append(errs, fmt.Errorf("extensions.%q: %v is not a string", ExtGVK, v))
		case err != nil:
			errs = append(errs, fmt.Errorf("extensions.%w", err))
		case apiVersion != str(r.Attributes["apiVersion"]) || kind != str(r.Attributes["kind"]):
			errs = append(errs, fmt.Errorf("extensions.%q is %q but the object is apiVersion %q, kind %q",
				ExtGVK, s, str(r.Attributes["apiVersion"]), str(r.Attributes["kind"])))
		}
	}
	if _, err := IsWorkload(r); err != nil {
		errs = append(errs, err)
	}
	if v, ok := r.Extensions[ExtKubeConfig]; ok && v != nil {
		if _, isStr := v.(string); !isStr {
			errs = append(errs, fmt.Errorf("extensions.%q: %v is not a file path", ExtKubeConfig, v))
		}
	}
	return errs
}
