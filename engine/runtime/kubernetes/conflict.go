package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.Managers = (*Runtime)(nil)

// applyConflict turns the apiserver's refusal of a server-side apply that
// would change fields other managers own into a Permanent error naming each
// field and its manager, as details.causes carry them. It returns nil for any
// other error (a 409 for a stale resourceVersion is retryable).
func applyConflict(op, id string, err error) error {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) {
		return nil
	}
	d := status.Status().Details
	if d == nil {
		return nil
	}
	var fields []string
	for _, c := range d.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			// c.Message: `conflict with "kubectl" using v1`, c.Field: .data.key
			fields = append(fields, fmt.Sprintf("%s (%s)", c.Field, c.Message))
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return runtime.Permanent(fmt.Errorf("%s %s: other field managers own fields this apply changes: %s; "+
		"apply with --force-conflicts to take them over", op, id, strings.Join(fields, ", ")))
}

// FieldManagers returns the field managers of the live object other than kumo
// (metadata.managedFields), sorted and without repeats; none when it is absent.
func (r *Runtime) FieldManagers(ctx context.Context, res *engine.Resource) ([]string, error) {
	if err := runtime.Interrupted(ctx, "read", res.ID); err != nil {
		return nil, err
	}
	if rt, err := r.forResource(res); err != nil || rt != r {
		if err != nil {
			return nil, prefix("read", err)
		}
		return rt.FieldManagers(ctx, res)
	}
	t, err := r.resolve(res)
	if err != nil {
		return nil, prefix("read", err)
	}
	if !t.known {
		return nil, nil
	}
	out, err := t.ri.Get(ctx, t.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify("read", t.id, err)
	}
	var managers []string
	for _, f := range out.GetManagedFields() {
		if f.Manager != FieldManager && f.Manager != "" && !slices.Contains(managers, f.Manager) {
			managers = append(managers, f.Manager)
		}
	}
	slices.Sort(managers)
	return managers, nil
}
