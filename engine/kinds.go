package engine

import (
	"strings"
)

// groupKind names a Kubernetes kind independently of its version.
type groupKind struct{ group, kind string }

// groupKindOf splits an apiVersion ("apps/v1", "v1") and a kind into a groupKind.
func groupKindOf(apiVersion, kind string) groupKind {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = "" // the core group: "v1"
	}
	return groupKind{group, kind}
}

// clusterScoped are the built-in kinds that live outside namespaces. The
// Kubernetes runtime asks the apiserver's discovery for the scope; this table
// only serves where no cluster is at hand: giving manifest objects a namespace,
// telling two IDs of one cluster-scoped object apart, and warning in a preview.
var clusterScoped = map[groupKind]bool{
	{"", "Namespace"}: true, {"", "Node"}: true, {"", "PersistentVolume"}: true, {"", "ComponentStatus"}: true,
	{"apiextensions.k8s.io", "CustomResourceDefinition"}:                 true,
	{"apiregistration.k8s.io", "APIService"}:                             true,
	{"rbac.authorization.k8s.io", "ClusterRole"}:                         true,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}:                  true,
	{"storage.k8s.io", "StorageClass"}:                                   true,
	{"storage.k8s.io", "CSIDriver"}:                                      true,
	{"storage.k8s.io", "CSINode"}:                                        true,
	{"storage.k8s.io", "VolumeAttachment"}:                               true,
	{"scheduling.k8s.io", "PriorityClass"}:                               true,
	{"node.k8s.io", "RuntimeClass"}:                                      true,
	{"networking.k8s.io", "IngressClass"}:                                true,
	{"certificates.k8s.io", "CertificateSigningRequest"}:                 true,
	{"flowcontrol.apiserver.k8s.io", "FlowSchema"}:                       true,
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"}:       true,
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     true,
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: true,
}

// Apply-order tiers of kinds, the way Helm and Argo CD order an install: what
// others need (namespaces, CRDs, identities, configuration, storage, RBAC) comes
// first, workloads after their Services, custom resources after their CRD, and
// admission webhooks last so that they never refuse the objects of their own
// install. Kinds not listed (custom resources, unknown built-ins) are tierOther.
const (
	tierNamespace = iota
	tierCRD
	tierConfig
	tierStorage
	tierRole
	tierRoleBinding
	tierService
	tierWorkload
	tierAfterWorkload
	tierOther
	tierWebhook
)

var kindTiers = map[groupKind]int{
	{"", "Namespace"}: tierNamespace,
	{"apiextensions.k8s.io", "CustomResourceDefinition"}: tierCRD,

	{"networking.k8s.io", "NetworkPolicy"}: tierConfig, {"", "ResourceQuota"}: tierConfig, {"", "LimitRange"}: tierConfig,
	{"policy", "PodDisruptionBudget"}: tierConfig, {"scheduling.k8s.io", "PriorityClass"}: tierConfig,
	{"", "ServiceAccount"}: tierConfig, {"", "Secret"}: tierConfig, {"", "ConfigMap"}: tierConfig,

	{"storage.k8s.io", "StorageClass"}: tierStorage, {"", "PersistentVolume"}: tierStorage, {"", "PersistentVolumeClaim"}: tierStorage,

	{"rbac.authorization.k8s.io", "ClusterRole"}: tierRole, {"rbac.authorization.k8s.io", "Role"}: tierRole,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}: tierRoleBinding, {"rbac.authorization.k8s.io", "RoleBinding"}: tierRoleBinding,

	{"", "Service"}: tierService,

	{"apps", "DaemonSet"}: tierWorkload, {"", "Pod"}: tierWorkload, {"", "ReplicationController"}: tierWorkload,
	{"apps", "ReplicaSet"}: tierWorkload, {"apps", "Deployment"}: tierWorkload, {"apps", "StatefulSet"}: tierWorkload,
	{"batch", "Job"}: tierWorkload, {"batch", "CronJob"}: tierWorkload,

	{"autoscaling", "HorizontalPodAutoscaler"}: tierAfterWorkload,
	{"networking.k8s.io", "IngressClass"}:      tierAfterWorkload, {"networking.k8s.io", "Ingress"}: tierAfterWorkload,

	{"apiregistration.k8s.io", "APIService"}: tierOther,

	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:   tierWebhook,
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}: tierWebhook,
}

func tierOf(gk groupKind) int {
	if t, ok := kindTiers[gk]; ok {
		return t
	}
	return tierOther
}

// deleteStageOf groups a wave's tiers for a delete, which goes stage by
// stage, the last applied first, each gone before the next: admission
// webhooks first, so that none refuses the deletes after it or outlives its
// backend; then custom resources (and the other kinds of tierOther), while
// the operators whose finalizers they need still run; then the workloads
// with everything they use (Services, RBAC, storage, configuration) at once,
// as Helm's uninstall and Argo CD's deletion of a wave do; then the CRDs;
// the Namespaces last.
func deleteStageOf(tier int) int {
	switch tier {
	case tierWebhook, tierOther, tierCRD, tierNamespace:
		return tier
	}
	return tierConfig
}

// crdScopes returns the kinds that the CustomResourceDefinitions among objs
// define, with true for the cluster-scoped ones.
func crdScopes(objs []map[string]any) map[groupKind]bool {
	out := map[groupKind]bool{}
	for _, o := range objs {
		if gk := groupKindOf(str(o["apiVersion"]), str(o["kind"])); gk != (groupKind{"apiextensions.k8s.io", "CustomResourceDefinition"}) {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, kind := str(spec["group"]), str(names["kind"])
		if group != "" && kind != "" {
			out[groupKind{group, kind}] = str(spec["scope"]) == "Cluster"
		}
	}
	return out
}

// isClusterScoped tells from the built-in table, then from crds (see crdScopes).
func isClusterScoped(gk groupKind, crds map[groupKind]bool) bool {
	return clusterScoped[gk] || crds[gk]
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
