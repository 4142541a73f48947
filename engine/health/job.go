package health

import "fmt"

// job: Complete is Healthy; Failed (or FailureTarget, which the controller sets
// just before Failed) is Degraded; Suspended is Suspended; anything else runs.
func job(o *object) Result {
	conds := o.conditions()
	for _, typ := range []string{"Failed", "FailureTarget"} {
		if c, ok := findCondition(conds, typ); ok && c.Status == "True" {
			return Result{Status: Degraded, Message: "job failed: " + c.text(), Reason: c.Reason}
		}
	}
	if c, ok := findCondition(conds, "Complete"); ok && c.Status == "True" {
		return result(Healthy, "completed (%d succeeded)", o.int(0, "status", "succeeded"))
	}
	if c, ok := findCondition(conds, "Suspended"); ok && c.Status == "True" {
		return Result{Status: Suspended, Message: "suspended", Reason: c.Reason}
	}
	return Result{Status: Progressing, Message: fmt.Sprintf("%d active, %d succeeded, %d failed",
		o.int(0, "status", "active"), o.int(0, "status", "succeeded"), o.int(0, "status", "failed"))}
}
