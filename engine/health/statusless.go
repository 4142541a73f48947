package health

import "strings"

// statusless lists kinds whose objects have no status (group/Kind, core
// kinds "/Kind"): Check finds them Healthy as soon as they exist, so an apply
// of one never waits for its health.
var statusless = map[string]bool{
	"/ConfigMap":                                   true,
	"/Secret":                                      true,
	"/ServiceAccount":                              true,
	"/LimitRange":                                  true,
	"rbac.authorization.k8s.io/Role":               true,
	"rbac.authorization.k8s.io/RoleBinding":        true,
	"rbac.authorization.k8s.io/ClusterRole":        true,
	"rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"scheduling.k8s.io/PriorityClass":              true,
	"storage.k8s.io/StorageClass":                  true,
	"networking.k8s.io/IngressClass":               true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":   true,
}

// Statusless reports whether objects of apiVersion and kind are Healthy as
// soon as they are applied (they have no status to wait for), so whoever
// orders work around health waits can count on none for them. An object
// being deleted is the exception Check makes for every kind.
func Statusless(apiVersion, kind string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = "" // "v1": the core group
	}
	return statusless[group+"/"+kind]
}
