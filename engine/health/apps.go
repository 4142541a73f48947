package health

import "fmt"

// deployment follows `kubectl rollout status`: the controller has observed the
// latest spec, every replica runs the new template, old ones are gone, and all
// are available. A paused Deployment is Suspended; one whose Progressing
// condition says ProgressDeadlineExceeded is Degraded (the controller gave up).
func deployment(o *object) Result {
	if o.boolean("spec", "paused") {
		return Result{Status: Suspended, Message: "rollout paused", Reason: "Paused"}
	}
	if r, ok := o.generationObserved(); !ok {
		return r
	}
	conds := o.conditions()
	if c, ok := findCondition(conds, "Progressing"); ok && c.Reason == "ProgressDeadlineExceeded" {
		return Result{Status: Degraded, Message: "progress deadline exceeded: " + c.text(), Reason: c.Reason}
	}
	want := o.int(1, "spec", "replicas")
	total := o.int(0, "status", "replicas")
	updated := o.int(0, "status", "updatedReplicas")
	available := o.int(0, "status", "availableReplicas")
	var r Result
	switch {
	case updated < want:
		r = result(Progressing, "%d/%d replicas updated", updated, want)
	case total > updated:
		r = result(Progressing, "%d old replicas pending termination", total-updated)
	case available < want:
		r = result(Progressing, "%d/%d replicas available", available, want)
	default:
		return result(Healthy, "%d/%d replicas available", available, want)
	}
	return withReplicaFailure(r, conds)
}

// withReplicaFailure adds why pods are missing, when a ReplicaFailure condition
// (quota, admission) says: the controller keeps retrying, so r stays
// Progressing, with that reason.
func withReplicaFailure(r Result, conds []condition) Result {
	if c, ok := findCondition(conds, "ReplicaFailure"); ok && c.Status == "True" {
		r.Message += ": " + c.text()
		r.Reason = c.Reason
	}
	return r
}

// replicaSet: observed, and all replicas available.
func replicaSet(o *object) Result {
	if r, ok := o.generationObserved(); !ok {
		return r
	}
	want := o.int(1, "spec", "replicas")
	available := o.int(0, "status", "availableReplicas")
	if available < want {
		return withReplicaFailure(result(Progressing, "%d/%d replicas available", available, want), o.conditions())
	}
	return result(Healthy, "%d/%d replicas available", available, want)
}

// statefulSet: observed, all replicas ready, and the rollout done: with a
// partition, the pods at or above it updated; otherwise the current revision is
// the update revision. With the OnDelete strategy pods change only when
// deleted, so there is no rollout to wait for.
func statefulSet(o *object) Result {
	if r, ok := o.generationObserved(); !ok {
		return r
	}
	want := o.int(1, "spec", "replicas")
	ready := o.int(0, "status", "readyReplicas")
	if ready < want {
		return result(Progressing, "%d/%d replicas ready", ready, want)
	}
	if _, ok := o.field("status", "availableReplicas"); ok {
		if available := o.int(0, "status", "availableReplicas"); available < want {
			return result(Progressing, "%d/%d replicas available", available, want)
		}
	}
	healthy := result(Healthy, "%d/%d replicas ready", ready, want)
	switch o.str("spec", "updateStrategy", "type") {
	case "OnDelete":
		return healthy
	}
	updated := o.int(0, "status", "updatedReplicas")
	if partition := o.int(0, "spec", "updateStrategy", "rollingUpdate", "partition"); partition > 0 {
		if target := want - partition; updated < target {
			return result(Progressing, "partitioned rollout: %d/%d replicas updated", updated, target)
		}
		return healthy
	}
	if current, update := o.str("status", "currentRevision"), o.str("status", "updateRevision"); current != update {
		return result(Progressing, "rolling update: %d/%d replicas at revision %s", updated, want, update)
	}
	return healthy
}

// daemonSet: observed, every scheduled pod updated and available. OnDelete has
// no rollout to wait for.
func daemonSet(o *object) Result {
	if r, ok := o.generationObserved(); !ok {
		return r
	}
	desired := o.int(0, "status", "desiredNumberScheduled")
	updated := o.int(0, "status", "updatedNumberScheduled")
	available := o.int(0, "status", "numberAvailable")
	if o.str("spec", "updateStrategy", "type") != "OnDelete" && updated < desired {
		return result(Progressing, "%d/%d pods updated", updated, desired)
	}
	if available < desired {
		return result(Progressing, "%d/%d pods available", available, desired)
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("%d/%d pods available", available, desired)}
}
