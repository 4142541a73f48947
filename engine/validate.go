package engine

import (
	"errors"
	"fmt"
)

// Validate reports every problem of s at once (joined with errors.Join), each naming
// the resource: an empty or duplicate ID, an unknown type, a dependsOn, $kumo_path or $kusion_path
// reference to a resource not in s, a Kubernetes resource whose ID does not match its
// object, a Terraform resource whose ID or extensions are malformed or disagree (see
// ParseTerraform) or whose attributes hold a Terraform meta-argument (see
// CheckTerraformArguments), Kusion extensions (GVK, kusion.io/is-workload, kubeConfig) that
// are malformed or disagree with the object, one Kubernetes object under two IDs
// (see sameObjects), a Secret value that refers to a Kusion secret store
// (see SecretStoreRefs), a sealed value anywhere in a resource (see
// CheckNoSealed), a hook that is malformed or the same object as a resource
// (see validateHooks), and dependency cycles, printed in order ("dependency cycle: a -> b -> a",
// each depending on the next). It returns nil for a valid spec.
func (s *Spec) Validate() error {
	var errs []error
	first := make(map[string]int, len(s.Resources))
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.ID == "" {
			errs = append(errs, fmt.Errorf("%s: empty id", where(i, r.ID)))
		} else if j, dup := first[r.ID]; dup {
			errs = append(errs, fmt.Errorf("duplicate resource id %q (resources[%d] and resources[%d])", r.ID, j, i))
		} else {
			first[r.ID] = i
		}
		switch r.Type {
		case Kubernetes:
			id, err := KubernetesIDOf(r.Attributes)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: attributes: %w", where(i, r.ID), err))
			case id != r.ID && r.ID != "":
				errs = append(errs, fmt.Errorf("%s: id does not match the object, whose apiVersion:kind:namespace:name is %q", where(i, r.ID), id))
			}
			for _, err := range checkKubernetesExtensions(r) {
				errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), err))
			}
		case Terraform:
			if _, err := parseTerraform(r, where(i, r.ID)); err != nil && r.ID != "" {
				errs = append(errs, unjoin(err)...)
			}
			for _, err := range unjoin(CheckTerraformArguments(r.Attributes)) {
				errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), err))
			}
		case "":
			errs = append(errs, fmt.Errorf("%s: missing type (want %s or %s)", where(i, r.ID), Kubernetes, Terraform))
		default:
			errs = append(errs, fmt.Errorf("%s: unknown type %q (want %s or %s)", where(i, r.ID), r.Type, Kubernetes, Terraform))
		}
		if _, err := WaitPolicyOf(r, "", 0); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), err))
		}
		if _, err := DeleteWithOf(r); err != nil { // checks ExtAfterApplied too
			errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), err))
		}
	}
	errs = append(errs, s.SecretStoreRefs()...)
	errs = append(errs, s.CheckNoSealed()...)
	errs = append(errs, s.sameObjects()...)
	errs = append(errs, s.validateHooks()...)
	errs = append(errs, s.validateMoves()...)
	g, graphErrs := s.buildGraph()
	errs = append(errs, graphErrs...)
	if _, err := g.TopoSort(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// objectKey names a Kubernetes object in its cluster regardless of the API
// version it is written in.
type objectKey struct {
	groupKind
	namespace, name, kubeConfig string
}

// sameObjects reports Kubernetes resources that are one object under two IDs:
// same group, kind, namespace and name in the same cluster (apps/v1 and
// apps/v1beta2 Deployments of one name, or a cluster-scoped object written once
// with a namespace and once without). Applying both would make two resources
// fight over the object and destroy delete it twice.
func (s *Spec) sameObjects() []error {
	crds := s.crdScopes()
	first := map[objectKey]int{}
	var errs []error
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Type != Kubernetes {
			continue
		}
		k, _ := keyOf(r.Attributes, crds)
		k.kubeConfig = KubeConfig(r)
		if k.kind == "" || k.name == "" {
			continue // reported as a malformed object
		}
		j, dup := first[k]
		if !dup {
			first[k] = i
			continue
		}
		if s.Resources[j].ID == r.ID {
			continue // reported as a duplicate id
		}
		errs = append(errs, fmt.Errorf("%s and %s are the same object (%s %s): give it once",
			where(j, s.Resources[j].ID), where(i, r.ID), k.kind, objectName(k.namespace, k.name)))
	}
	return errs
}

// keyOf names a Kubernetes object in its cluster (kubeConfig left empty). ns is
// its namespace as written, which the key leaves out when the kind is
// cluster-scoped (see isClusterScoped).
func keyOf(obj map[string]any, crds map[groupKind]bool) (k objectKey, ns string) {
	meta, _ := obj["metadata"].(map[string]any)
	ns = str(meta["namespace"])
	k = objectKey{groupKind: groupKindOf(str(obj["apiVersion"]), str(obj["kind"])), namespace: ns, name: str(meta["name"])}
	if isClusterScoped(k.groupKind, crds) {
		k.namespace = ""
	}
	return k, ns
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Warnings returns what is worth telling before a run although it is not an
// error: Kubernetes objects of a kind known to be cluster-scoped (a built-in one,
// or one a CRD of the spec defines so) written with a namespace, which the
// runtime applies cluster-scoped, ignoring the namespace.
func (s *Spec) Warnings() []string {
	crds := s.crdScopes()
	var out []string
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Type != Kubernetes {
			continue
		}
		if k, ns := keyOf(r.Attributes, crds); ns != "" && k.namespace == "" {
			out = append(out, fmt.Sprintf("%s: %s is cluster-scoped; namespace %q is ignored and it is applied cluster-wide", r.ID, k.kind, ns))
		}
	}
	return out
}

// crdScopes is crdScopes over the Kubernetes objects of s.
func (s *Spec) crdScopes() map[groupKind]bool {
	var objs []map[string]any
	for i := range s.Resources {
		if s.Resources[i].Type == Kubernetes {
			objs = append(objs, s.Resources[i].Attributes)
		}
	}
	return crdScopes(objs)
}
