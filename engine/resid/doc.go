// Package resid parses resource IDs, the one place that knows their forms:
//
//	Kubernetes  apiVersion:kind:namespace:name   apps/v1:Deployment:default:web
//	            apiVersion:kind:name             v1:Namespace:demo (cluster-scoped)
//	Terraform   providerNamespace:providerName:resourceType:resourceName
//	                                             hashicorp:random:random_password:db
//
// The apiVersion may hold a group with dots and a '/' (rbac.authorization.k8s.io/v1)
// but never a ':'; the core group is the bare version (v1).
//
// It is a leaf package, importing nothing of kumo's, because its callers sit on
// both sides of engine: engine builds and validates IDs, while engine/drift,
// which engine imports, must read them too, as must the runtimes, the
// workflows and the worker. engine.KubernetesID and engine.TerraformID write
// the IDs this package reads.
package resid
