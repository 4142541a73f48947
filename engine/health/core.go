package health

import "strings"

// pvc: Bound is Healthy, Lost Degraded, Pending (waiting for a volume or a
// consumer, with WaitForFirstConsumer) Progressing.
func pvc(o *object) Result {
	switch phase := o.str("status", "phase"); phase {
	case "Bound":
		return Result{Status: Healthy, Message: "bound to " + o.str("spec", "volumeName")}
	case "Lost":
		return Result{Status: Degraded, Message: "volume " + o.str("spec", "volumeName") + " lost", Reason: "Lost"}
	default:
		return Result{Status: Progressing, Message: "waiting for a volume (phase " + orDefault(phase, "unset") + ")"}
	}
}

// service: a LoadBalancer Service waits for its load balancer's address; other
// types are ready once created.
func service(o *object) Result {
	if o.str("spec", "type") != "LoadBalancer" {
		return Result{Status: Healthy}
	}
	return loadBalancerIngress(o, "waiting for a load balancer address")
}

// ingress waits for the ingress controller to publish an address.
func ingress(o *object) Result {
	return loadBalancerIngress(o, "waiting for an ingress controller to assign an address")
}

func loadBalancerIngress(o *object, waiting string) Result {
	var addrs []string
	o.each(func(in *object) {
		addrs = append(addrs, orDefault(in.str("ip"), in.str("hostname")))
	}, "status", "loadBalancer", "ingress")
	if len(addrs) == 0 {
		return Result{Status: Progressing, Message: waiting}
	}
	return Result{Status: Healthy, Message: "address " + strings.Join(addrs, ", ")}
}

// namespace: Active is Healthy; Terminating Progressing (it goes once its
// content is deleted).
func namespace(o *object) Result {
	if o.str("status", "phase") == "Terminating" {
		return Result{Status: Progressing, Message: "terminating", Reason: "Terminating"}
	}
	return Result{Status: Healthy}
}
