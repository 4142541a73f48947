package runtime

import (
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// NotServedError is Apply's error for an object whose kind the infrastructure
// does not know (Kubernetes: no CRD installed for it). A preview of a custom
// resource whose CRD the same run creates meets it, and plans a create.
type NotServedError struct {
	Op, ID string
	Kind   string // as the object names it, e.g. "example.com/v1, Kind=Widget"
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("%s %s: kind %s is not served by the cluster (no CRD installed?)", e.Op, e.ID, e.Kind)
}

// NamespaceMissingError is a dry-run Apply's error for a namespaced object
// whose namespace does not exist: the apiserver cannot check it. A preview
// whose spec creates the namespace (applied first) shows Planned, the object
// as it would be written; any other is refused at preview, as the apply would
// be.
type NamespaceMissingError struct {
	ID, Namespace string
	Planned       *engine.Resource
}

func (e *NamespaceMissingError) Error() string {
	return fmt.Sprintf("dry-run %s: namespace %q does not exist", e.ID, e.Namespace)
}
