package health

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checks maps "group/Kind" (core kinds: "/Kind") to the kind's health function.
// Versions do not matter: the fields read are the same in every served version.
var checks = map[string]func(*object) Result{
	"apps/Deployment":           deployment,
	"apps/StatefulSet":          statefulSet,
	"apps/DaemonSet":            daemonSet,
	"apps/ReplicaSet":           replicaSet,
	"batch/Job":                 job,
	"/Pod":                      pod,
	"/PersistentVolumeClaim":    pvc,
	"/Service":                  service,
	"/Namespace":                namespace,
	"networking.k8s.io/Ingress": ingress,
	"apiextensions.k8s.io/CustomResourceDefinition": crd,
	"apiregistration.k8s.io/APIService":             apiService,
	"autoscaling/HorizontalPodAutoscaler":           hpa,
}

// Check returns the health of obj as the apiserver returned it; a nil obj is
// Missing. Objects being deleted are Progressing. Kinds without a function of
// their own are judged by their Ready or Available condition if they have one,
// else Healthy.
func Check(obj *unstructured.Unstructured) Result {
	if obj == nil || obj.Object == nil {
		return Result{Status: Missing, Message: "not found"}
	}
	if obj.GetDeletionTimestamp() != nil {
		return Result{Status: Progressing, Message: "being deleted", Reason: "Terminating"}
	}
	gvk := obj.GroupVersionKind()
	fn := checks[gvk.Group+"/"+gvk.Kind]
	if fn == nil {
		fn = readyCondition
	}
	o := &object{u: obj}
	r := fn(o)
	if o.err != nil {
		return Result{Status: Unknown, Message: o.err.Error()}
	}
	return r
}

// object reads typed fields of an unstructured object, remembering the first
// field of the wrong type (Check then answers Unknown).
type object struct {
	u   *unstructured.Unstructured
	err error
}

func (o *object) field(path ...string) (any, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(o.u.Object, path...)
	return v, ok && v != nil
}

func (o *object) fail(path []string, want string, v any) {
	if o.err == nil {
		o.err = fmt.Errorf("%s: %T is not %s", strings.Join(path, "."), v, want)
	}
}

// int returns an integer field, def when absent. Objects decoded from JSON
// without a schema carry float64 or json.Number, from client-go int64.
func (o *object) int(def int64, path ...string) int64 {
	v, ok := o.field(path...)
	if !ok {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		if n == math.Trunc(n) {
			return int64(n)
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	o.fail(path, "an integer", v)
	return def
}

func (o *object) str(path ...string) string {
	v, ok := o.field(path...)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		o.fail(path, "a string", v)
	}
	return s
}

func (o *object) boolean(path ...string) bool {
	v, ok := o.field(path...)
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		o.fail(path, "a boolean", v)
	}
	return b
}

func (o *object) list(path ...string) []any {
	v, ok := o.field(path...)
	if !ok {
		return nil
	}
	l, isList := v.([]any)
	if !isList {
		o.fail(path, "a list", v)
	}
	return l
}

// generationObserved reports whether the controller has seen the latest spec
// (status.observedGeneration caught up with metadata.generation); if not, r says so.
func (o *object) generationObserved() (Result, bool) {
	gen, observed := o.u.GetGeneration(), o.int(0, "status", "observedGeneration")
	if observed < gen {
		return result(Progressing, "waiting for the controller to observe generation %d (at %d)", gen, observed), false
	}
	return Result{}, true
}

// condition is one entry of status.conditions.
type condition struct {
	Type, Status, Reason, Message string
}

func (o *object) conditions() []condition {
	var out []condition
	o.each(func(c *object) {
		out = append(out, condition{Type: c.str("type"), Status: c.str("status"), Reason: c.str("reason"), Message: c.str("message")})
	}, "status", "conditions")
	return out
}

// each calls fn with every object in the list at path; a wrong type in an item
// is reported with the item's path.
func (o *object) each(fn func(item *object), path ...string) {
	for i, v := range o.list(path...) {
		at := append(append([]string(nil), path...), fmt.Sprint(i))
		m, ok := v.(map[string]any)
		if !ok {
			o.fail(at, "an object", v)
			continue
		}
		item := &object{u: &unstructured.Unstructured{Object: m}}
		fn(item)
		if item.err != nil && o.err == nil {
			o.err = fmt.Errorf("%s.%w", strings.Join(at, "."), item.err)
		}
	}
}

func findCondition(conds []condition, typ string) (condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return condition{}, false
}

// text is a condition's message, else its reason, else its type and status.
func (c condition) text() string {
	switch {
	case c.Message != "":
		return c.Message
	case c.Reason != "":
		return c.Reason
	}
	return fmt.Sprintf("%s is %s", c.Type, c.Status)
}

// readyCondition judges kinds without a function of their own (custom
// resources mostly) by a Ready, else Available, condition: True is Healthy,
// anything else Progressing (a controller still working or waiting). Without
// either condition the object is Healthy once it exists.
func readyCondition(o *object) Result {
	conds := o.conditions()
	for _, typ := range []string{"Ready", "Available"} {
		c, ok := findCondition(conds, typ)
		if !ok {
			continue
		}
		if o.hasObservedGeneration() {
			if r, ok := o.generationObserved(); !ok {
				return r
			}
		}
		if c.Status == "True" {
			return Result{Status: Healthy, Message: c.Message, Reason: c.Reason}
		}
		return Result{Status: Progressing, Message: c.text(), Reason: c.Reason}
	}
	return Result{Status: Healthy}
}

func (o *object) hasObservedGeneration() bool {
	_, ok := o.field("status", "observedGeneration")
	return ok
}
