package runtime

import "fmt"

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
