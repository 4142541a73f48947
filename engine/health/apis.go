package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crd: Healthy once Established with its names accepted; a name conflict
// (NamesAccepted False) is Degraded, as nothing will resolve it but a change.
func crd(o *object) Result {
	conds := o.conditions()
	if c, ok := findCondition(conds, "NamesAccepted"); ok && c.Status == "False" {
		return Result{Status: Degraded, Message: c.text(), Reason: c.Reason}
	}
	if c, ok := findCondition(conds, "Terminating"); ok && c.Status == "True" {
		return Result{Status: Progressing, Message: c.text(), Reason: c.Reason}
	}
	c, ok := findCondition(conds, "Established")
	if !ok || c.Status != "True" {
		return Result{Status: Progressing, Message: "waiting to be established"}
	}
	if n, ok := findCondition(conds, "NamesAccepted"); !ok || n.Status != "True" {
		return Result{Status: Progressing, Message: "waiting for its names to be accepted"}
	}
	return Result{Status: Healthy, Message: "established"}
}

// apiService: Healthy when Available; otherwise Progressing with why (the
// backing Service may come up later in the same run).
func apiService(o *object) Result {
	c, ok := findCondition(o.conditions(), "Available")
	switch {
	case !ok:
		return Result{Status: Progressing, Message: "waiting to be available"}
	case c.Status == "True":
		return Result{Status: Healthy, Message: "available"}
	}
	return Result{Status: Progressing, Message: c.text(), Reason: c.Reason}
}

// hpa: failing to read or update the target's scale, or an invalid selector or
// metric, is Degraded; AbleToScale True is Healthy; otherwise the autoscaler has
// not acted yet. Missing metrics (ScalingActive False, FailedGetResourceMetric)
// are not Degraded: metrics usually arrive a minute after the workload starts,
// and some clusters have none. autoscaling/v1 keeps the conditions in an
// annotation.
func hpa(o *object) Result {
	conds := o.conditions()
	if len(conds) == 0 {
		conds = o.annotatedConditions("autoscaling.alpha.kubernetes.io/conditions")
	}
	for _, c := range conds {
		switch c.Reason {
		case "FailedGetScale", "FailedUpdateScale", "InvalidSelector", "InvalidMetricSourceType":
			if c.Status == "False" {
				return Result{Status: Degraded, Message: c.text(), Reason: c.Reason}
			}
		}
	}
	if c, ok := findCondition(conds, "AbleToScale"); ok && c.Status == "True" {
		if a, ok := findCondition(conds, "ScalingActive"); ok && a.Status == "False" {
			return Result{Status: Healthy, Message: "able to scale; " + a.text(), Reason: a.Reason}
		}
		return Result{Status: Healthy, Message: c.text(), Reason: c.Reason}
	}
	return Result{Status: Progressing, Message: "waiting for the autoscaler"}
}

// annotatedConditions reads conditions kept as JSON in an annotation.
func (o *object) annotatedConditions(key string) []condition {
	raw, ok := o.u.GetAnnotations()[key]
	if !ok {
		return nil
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		if o.err == nil {
			o.err = fmt.Errorf("annotation %s: %w", key, err)
		}
		return nil
	}
	var conds []condition
	for _, m := range list {
		c := &object{u: &unstructured.Unstructured{Object: m}}
		conds = append(conds, condition{Type: c.str("type"), Status: c.str("status"), Reason: c.str("reason"), Message: c.str("message")})
	}
	return conds
}
