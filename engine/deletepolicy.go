package engine

import (
	"fmt"
	"strings"
)

// DeletePolicy is what a run may do to a resource it would delete: because
// the spec dropped it (prune), on destroy, on rollback to a revision without
// it, or when a failed apply's compensation undoes its creation.
type DeletePolicy string

const (
	// DeleteAllowed is the default: the resource is deleted.
	DeleteAllowed DeletePolicy = ""
	// DeleteRetain leaves the object live and stops managing it: the release
	// drops it from its state and lists it as retained.
	DeleteRetain DeletePolicy = "retain"
	// DeleteProtect refuses the run before anything is deleted, unless an
	// admin allows it (--allow-protected-delete).
	DeleteProtect DeletePolicy = "protect"
)

// The annotations (on a Kubernetes object) or extensions (on any resource)
// that set a delete policy. Argo CD's Prune=false / Delete=false and Helm's
// keep policy are read as retain, so manifests written for those tools keep
// their meaning under kumo.
const (
	DeletePolicyAnnotation = "kumoproj.io/delete-policy"
	ArgoSyncOptions        = "argocd.argoproj.io/sync-options"
	HelmResourcePolicy     = "helm.sh/resource-policy"
)

// stronger reports whether p protects more than q (protect > retain > delete).
func (p DeletePolicy) stronger(q DeletePolicy) bool {
	rank := map[DeletePolicy]int{DeleteAllowed: 0, DeleteRetain: 1, DeleteProtect: 2}
	return rank[p] > rank[q]
}

// DeletePolicyOf reads r's delete policy from its annotations (Kubernetes)
// and its extensions (any type, so a Terraform resource can carry one); the
// strongest one found wins. A kumoproj.io/delete-policy value other than
// retain, protect or delete is an error naming the resource: a typo must not
// leave a database unprotected.
func DeletePolicyOf(r *Resource) (DeletePolicy, error) {
	if r == nil {
		return DeleteAllowed, nil
	}
	policy := DeleteAllowed
	raise := func(p DeletePolicy) {
		if p.stronger(policy) {
			policy = p
		}
	}
	read := func(where string, values map[string]any) error {
		if v, ok := values[DeletePolicyAnnotation]; ok {
			s, _ := v.(string)
			switch DeletePolicy(strings.TrimSpace(s)) {
			case DeleteRetain:
				raise(DeleteRetain)
			case DeleteProtect:
				raise(DeleteProtect)
			case "delete":
			default:
				return fmt.Errorf("resource %s: %s %s: %v; want retain, protect or delete", r.ID, where, DeletePolicyAnnotation, v)
			}
		}
		if s, ok := values[ArgoSyncOptions].(string); ok {
			for _, opt := range strings.Split(s, ",") {
				if o := strings.TrimSpace(opt); o == "Prune=false" || o == "Delete=false" {
					raise(DeleteRetain)
				}
			}
		}
		if s, ok := values[HelmResourcePolicy].(string); ok && strings.TrimSpace(s) == "keep" {
			raise(DeleteRetain)
		}
		return nil
	}
	if r.Type == Kubernetes {
		meta, _ := r.Attributes["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if err := read("annotation", annotations); err != nil {
			return "", err
		}
	}
	if err := read("extension", r.Extensions); err != nil {
		return "", err
	}
	return policy, nil
}

// DeletePolicyOfAll is the strongest policy of the views of one resource
// (its recorded state, the spec that wants it): dropping the annotation and
// the resource in one change must not delete a protected object silently.
func DeletePolicyOfAll(views ...*Resource) (DeletePolicy, error) {
	policy := DeleteAllowed
	for _, r := range views {
		p, err := DeletePolicyOf(r)
		if err != nil {
			return "", err
		}
		if p.stronger(policy) {
			policy = p
		}
	}
	return policy, nil
}

// ProtectedError is a run refused because it would delete protected
// resources: it names them, and how an admin may allow it.
type ProtectedError struct {
	// What is what would delete them: "destroy", "apply (prune)",
	// "compensation".
	What string
	IDs  []string
}

func (e *ProtectedError) Error() string {
	return fmt.Sprintf("%s would delete %d protected resource(s) (%s: protect): %s; nothing was deleted — remove the annotation first, or an admin may run it with --allow-protected-delete",
		e.What, len(e.IDs), DeletePolicyAnnotation, strings.Join(e.IDs, ", "))
}
