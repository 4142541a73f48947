package engine

import (
	"reflect"
	"strconv"

	"github.com/kumoproj/kumo/internal/keys"
)

// Action is what applying the spec does to one resource.
type Action string

const (
	Create    Action = "Create"
	Update    Action = "Update"
	Delete    Action = "Delete"
	UnChanged Action = "UnChanged"
	// Adopt: the resource exists live, kumo has not recorded it, and the spec
	// matches it; the apply takes it over (Kubernetes: kumo becomes a field
	// manager) without changing it.
	Adopt Action = "Adopt"
)

// KnownAfterApply stands, in a planned resource, for a value that is known only
// once the resource is applied: one a provider computes (a new id), or one taken
// from a resource that is not applied yet.
const KnownAfterApply = "(known after apply)"

// FieldChange is one attribute that an Update changes. Path is dotted, with list
// elements as [i] and keys that are not plain identifiers quoted:
// spec.template.spec.containers[0].image, metadata.labels["app.kubernetes.io/name"].
// Before is the live value and After the planned one; a field present on one side only
// has the other absent (nil).
//
// A sensitive value (see MapSensitive) shows as Masked on either side, and
// Sensitive holds a fingerprint of the change instead, so that plans changing
// it to different values still differ (and have different digests).
type FieldChange struct {
	Path      string `json:"path"`
	Before    any    `json:"before,omitempty"`
	After     any    `json:"after,omitempty"`
	Sensitive string `json:"sensitive,omitempty"`
}

// Change is the preview of one resource.
type Change struct {
	ID     string        `json:"id"`
	Type   Type          `json:"type"`
	Action Action        `json:"action"`
	Fields []FieldChange `json:"fields,omitempty"`
	// Drifted reports that the live resource no longer matches the recorded state:
	// someone changed it outside kumo.
	Drifted bool `json:"drifted,omitempty"`
	// TakingOverFrom names, for an Adopt or an Update of a resource that exists
	// live but not in kumo's state, who manages it now (Kubernetes field managers).
	TakingOverFrom []string `json:"takingOverFrom,omitempty"`
	// Wait, on an UnChanged resource, says that an apply still waits for
	// it to be healthy (see PendingWait). It is not part of the plan's
	// digest: health is not a change, and it may move while a plan waits
	// for its approval.
	Wait *PendingWait `json:"wait,omitempty"`
	// Retain, on a Delete, says the resource's delete policy is retain: the
	// run leaves it live and stops managing it instead of deleting it.
	Retain bool `json:"retain,omitempty"`
}

// TakesOver reports whether the change makes kumo manage a resource it did not
// record: an Adopt, or an Update of a resource created outside kumo.
func (c Change) TakesOver() bool {
	return c.Action == Adopt || c.Action == Update && len(c.TakingOverFrom) > 0
}

// Diff compares three views of one resource:
//   - planned: what an apply would produce (the runtime's dry-run result), nil when
//     the resource is no longer in the spec;
//   - live: the resource as it is now, nil when absent;
//   - prior: the resource as last recorded in state, nil when new.
//
// The action is Create (planned, not live), Update (both, and they differ; Fields lists
// each difference), Delete (live, not planned), Adopt (a Kubernetes object: planned
// equals live but prior is nil: it was made outside kumo, which now takes it over) or
// UnChanged. Drifted is set when live
// and prior both exist and differ. Attributes are compared after Normalize; for
// Kubernetes, fields the server maintains (metadata.managedFields, resourceVersion,
// uid, creationTimestamp, generation, the deployment.kubernetes.io/revision
// annotation, and status) are ignored. Since planned comes from a server-side dry run,
// server defaults are on both sides and do not show as changes. An object missing on
// one side compares as an empty one, so {} and absent are equal and an added or
// removed object shows as its leaves.
func Diff(id string, typ Type, planned, live, prior *Resource) Change {
	c := Change{ID: id, Type: typ, Action: UnChanged}
	// Sensitive values are compared by fingerprint and never reach c.
	fp := fingerprinted(planned, live, prior)
	planned, live, prior = fp[0], fp[1], fp[2]
	var p, l map[string]any
	if planned != nil {
		p = comparableAttrs(typ, planned.Attributes)
	}
	if live != nil {
		l = comparableAttrs(typ, live.Attributes)
	}
	switch {
	case planned != nil && live == nil:
		c.Action = Create
	case planned != nil && live != nil:
		diffValue(nil, l, p, true, true, &c.Fields)
		switch {
		case len(c.Fields) > 0:
			c.Action = Update
		case prior == nil && typ == Kubernetes:
			// Taking over with kumo's field manager is a Kubernetes notion; a
			// Terraform object kumo imports (import-id) is its own record.
			c.Action = Adopt
		}
	case planned == nil && live != nil:
		c.Action = Delete
	}
	if live != nil && prior != nil {
		var drift []FieldChange
		diffValue(nil, l, comparableAttrs(typ, prior.Attributes), true, true, &drift)
		c.Drifted = len(drift) > 0
	}
	maskFields(c.Fields)
	return c
}

// serverFields are the metadata fields the Kubernetes API server maintains.
var serverFields = []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"}

// serverAnnotations are annotations controllers maintain.
var serverAnnotations = []string{"deployment.kubernetes.io/revision"}

// comparableAttrs returns a normalized copy of attrs without the fields Diff ignores.
func comparableAttrs(typ Type, attrs map[string]any) map[string]any {
	m, _ := Normalize(attrs).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	if typ != Kubernetes {
		return m
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, f := range serverFields {
			delete(meta, f)
		}
		if ann, ok := meta["annotations"].(map[string]any); ok {
			for _, a := range serverAnnotations {
				delete(ann, a)
			}
		}
	}
	return m
}

// diffValue appends the differences between normalized trees a (before) and b
// (after) under path. hasA and hasB say whether each side exists at all. Map keys are
// visited in sorted order and list elements by index, so the result is ordered by path.
//
// A missing object and an empty one are the same (Kubernetes does not tell them
// apart), so an object on one side only is compared key by key with an empty one: the
// changes name its leaves, e.g. metadata.labels.team rather than metadata.labels.
func diffValue(path []string, a, b any, hasA, hasB bool, out *[]FieldChange) {
	if _, ok := b.(map[string]any); ok && !hasA {
		a, hasA = map[string]any{}, true
	}
	if _, ok := a.(map[string]any); ok && !hasB {
		b, hasB = map[string]any{}, true
	}
	if hasA && hasB {
		switch x := a.(type) {
		case map[string]any:
			if y, ok := b.(map[string]any); ok {
				for _, k := range keys.Union(x, y) {
					va, inA := x[k]
					vb, inB := y[k]
					diffValue(append(path, keySegment(k, len(path) == 0)), va, vb, inA, inB, out)
				}
				return
			}
		case []any:
			if y, ok := b.([]any); ok {
				for i := range max(len(x), len(y)) {
					var va, vb any
					if i < len(x) {
						va = x[i]
					}
					if i < len(y) {
						vb = y[i]
					}
					diffValue(append(path, "["+strconv.Itoa(i)+"]"), va, vb, i < len(x), i < len(y), out)
				}
				return
			}
		}
		if reflect.DeepEqual(a, b) {
			return
		}
	}
	fc := FieldChange{Path: joinPath(path)}
	if hasA {
		fc.Before = a
	}
	if hasB {
		fc.After = b
	}
	*out = append(*out, fc)
}

// keySegment renders a map key as a path segment: .key for plain identifiers
// (letters, digits, '_' and '-', not starting with a digit or '-'), ["key"] otherwise.
func keySegment(k string, root bool) string {
	plain := k != ""
	for i, r := range k {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && (r == '-' || '0' <= r && r <= '9'):
		default:
			plain = false
		}
	}
	switch {
	case !plain:
		return "[" + strconv.Quote(k) + "]"
	case root:
		return k
	}
	return "." + k
}

func joinPath(path []string) string {
	n := 0
	for _, s := range path {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range path {
		b = append(b, s...)
	}
	return string(b)
}
