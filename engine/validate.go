package engine

import (
	"errors"
	"fmt"
)

// Validate reports every problem of s at once (joined with errors.Join), each naming
// the resource: an empty or duplicate ID, an unknown type, a dependsOn or $kumo_path
// reference to a resource not in s, a Kubernetes resource whose ID does not match its
// object, a Terraform resource whose ID or extensions are malformed or disagree (see
// ParseTerraform), and dependency cycles, printed in order ("dependency cycle: a -> b -> a",
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
		case Terraform:
			if _, err := parseTerraform(r, where(i, r.ID)); err != nil && r.ID != "" {
				errs = append(errs, unjoin(err)...)
			}
		case "":
			errs = append(errs, fmt.Errorf("%s: missing type (want %s or %s)", where(i, r.ID), Kubernetes, Terraform))
		default:
			errs = append(errs, fmt.Errorf("%s: unknown type %q (want %s or %s)", where(i, r.ID), r.Type, Kubernetes, Terraform))
		}
		if _, err := WaitPolicyOf(r, "", 0); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), err))
		}
	}
	g, graphErrs := s.buildGraph()
	errs = append(errs, graphErrs...)
	if _, err := g.TopoSort(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
