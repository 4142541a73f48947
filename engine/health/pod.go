package health

import (
	"fmt"
	"strings"
)

// pod: a container stuck waiting for a reason that will not go away by itself
// (CrashLoopBackOff, ImagePullBackOff, ErrImagePull, CreateContainerConfigError,
// ...) makes the pod Degraded, whatever its phase. Otherwise Pending and
// Running-but-not-ready pods are Progressing, Running and Ready ones and
// Succeeded ones Healthy, Failed ones Degraded.
func pod(o *object) Result {
	for _, path := range [][]string{{"status", "initContainerStatuses"}, {"status", "containerStatuses"}} {
		for _, cs := range o.containerStatuses(path...) {
			if stuck(cs.waitingReason) {
				msg := cs.waitingMessage
				if msg == "" {
					msg = fmt.Sprintf("container %q: %s", cs.name, cs.waitingReason)
				}
				return Result{Status: Degraded, Message: msg, Reason: cs.waitingReason}
			}
		}
	}
	phase := o.str("status", "phase")
	switch phase {
	case "Pending", "":
		// Why it is pending is usually in PodScheduled ("0/3 nodes are available: ...").
		if c, ok := findCondition(o.conditions(), "PodScheduled"); ok && c.Status == "False" {
			return Result{Status: Progressing, Message: c.text(), Reason: c.Reason}
		}
		return Result{Status: Progressing, Message: orDefault(o.str("status", "message"), "pending")}
	case "Succeeded":
		return Result{Status: Healthy, Message: "succeeded"}
	case "Failed":
		return Result{Status: Degraded, Message: o.failure(), Reason: o.str("status", "reason")}
	case "Running":
		c, _ := findCondition(o.conditions(), "Ready")
		if c.Status == "True" {
			return Result{Status: Healthy, Message: "running and ready"}
		}
		return Result{Status: Progressing, Message: orDefault(c.Message, "running, not ready")}
	}
	return Result{Status: Unknown, Message: "phase " + phase}
}

// stuck reports whether a container's waiting reason needs a change (or, for
// back-offs, more luck) rather than time: the kubelet's ErrImagePull,
// ImagePullBackOff, CrashLoopBackOff, InvalidImageName, Create/RunContainerError,
// CreateContainerConfigError. ContainerCreating and PodInitializing are not.
func stuck(reason string) bool {
	return strings.HasPrefix(reason, "Err") || strings.HasSuffix(reason, "BackOff") ||
		strings.HasSuffix(reason, "Error") || reason == "InvalidImageName"
}

type containerStatus struct {
	name, waitingReason, waitingMessage string
}

func (o *object) containerStatuses(path ...string) []containerStatus {
	var out []containerStatus
	o.each(func(c *object) {
		out = append(out, containerStatus{
			name:           c.str("name"),
			waitingReason:  c.str("state", "waiting", "reason"),
			waitingMessage: c.str("state", "waiting", "message"),
		})
	}, path...)
	return out
}

// failure says why a Failed pod failed: its status message, else the first
// container that terminated with a message, a reason or a non-zero exit code.
func (o *object) failure() string {
	if msg := o.str("status", "message"); msg != "" {
		return msg
	}
	var msg string
	for _, path := range [][]string{{"status", "initContainerStatuses"}, {"status", "containerStatuses"}} {
		o.each(func(c *object) {
			if msg != "" {
				return
			}
			if _, ok := c.field("state", "terminated"); !ok {
				return
			}
			name := c.str("name")
			switch m, reason, code := c.str("state", "terminated", "message"), c.str("state", "terminated", "reason"), c.int(0, "state", "terminated", "exitCode"); {
			case m != "":
				msg = fmt.Sprintf("container %q: %s", name, m)
			case code != 0 && reason != "":
				msg = fmt.Sprintf("container %q: %s (exit code %d)", name, reason, code)
			case code != 0:
				msg = fmt.Sprintf("container %q exited with code %d", name, code)
			}
		}, path...)
	}
	return orDefault(msg, "failed")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
