package drift

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/internal/tree"
)

// RespectIgnored returns desired (the object kumo would apply) with each field
// an ignore rule of c selects for resource id set to its live value, as Argo
// CD's RespectIgnoreDifferences does: a preview shows no change there and an
// apply leaves it as it is live (replicas an HPA scales, a caBundle a
// webhook injects). The fields are those under a rule's JSON pointers, and
// those a rule's managedFieldsManagers own in live's managedFields; only
// fields desired sets are touched, and one live lacks is left out. live nil
// (the object is created) or no rule for id: desired itself. desired is not
// changed; the result shares no maps or lists that it changes with it.
func (c Config) RespectIgnored(id, typ string, desired, live map[string]any) map[string]any {
	if live == nil {
		return desired
	}
	var pointers []string
	var managers []string
	for _, r := range c.Ignore {
		if r.selects(id, typ) {
			pointers = append(pointers, r.JSONPointers...)
			managers = append(managers, r.ManagedFieldsManagers...)
		}
	}
	if len(managers) > 0 {
		pointers = append(pointers, ownedBy(live, managers)...)
	}
	if len(pointers) == 0 {
		return desired
	}
	out := desired
	for _, p := range pointers {
		segs := split(p)
		if len(segs) == 0 || segs[0] == "metadata" && len(segs) > 1 && (segs[1] == "name" || segs[1] == "namespace") {
			continue // what names the object is never taken from live
		}
		if _, ok := tree.Lookup(out, segs); !ok {
			continue // kumo does not set it: nothing to keep
		}
		out = cloneAlong(out, segs)
		if lv, ok := tree.Lookup(live, segs); ok {
			set(out, segs, lv)
		} else {
			remove(out, segs)
		}
	}
	return out
}

// Selects reports whether a rule of c selects resource id of type typ, and
// whether one of those names field managers (RespectIgnored then needs live's
// managedFields).
func (c Config) Selects(id, typ string) (selected, byManager bool) {
	for _, r := range c.Ignore {
		if r.selects(id, typ) {
			selected = true
			byManager = byManager || len(r.ManagedFieldsManagers) > 0
		}
	}
	return selected, byManager
}

// ownedBy lists, as JSON pointers into live, the fields managers own there.
func ownedBy(live map[string]any, managers []string) []string {
	var out []string
	for _, e := range managedFields(live) {
		name, _ := e["manager"].(string)
		if !slices.Contains(managers, name) {
			continue
		}
		set, _ := e["fieldsV1"].(map[string]any)
		var leaves []leaf
		walk(set, live, live, true, "", "", &leaves)
		for _, l := range leaves {
			out = append(out, l.pointer)
		}
	}
	return out
}

// split parses a JSON pointer into its unescaped segments.
func split(p string) []string {
	if p == "" || p == "/" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// cloneAlong copies the maps and lists on the way to segs' parent (which
// lookup found), so that setting or removing the field changes no one
// else's object.
func cloneAlong(root map[string]any, segs []string) map[string]any {
	out := maps.Clone(root)
	var cur any = out
	for _, s := range segs[:len(segs)-1] {
		switch x := cur.(type) {
		case map[string]any:
			next := cloneValue(x[s])
			x[s] = next
			cur = next
		case []any:
			i, _ := strconv.Atoi(s)
			next := cloneValue(x[i])
			x[i] = next
			cur = next
		}
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return maps.Clone(x)
	case []any:
		return slices.Clone(x)
	}
	return v
}

// set stores v at segs in root, whose parent exists.
func set(root map[string]any, segs []string, v any) {
	parent, _ := tree.Lookup(root, segs[:len(segs)-1])
	last := segs[len(segs)-1]
	switch x := parent.(type) {
	case map[string]any:
		x[last] = v
	case []any:
		if i, err := strconv.Atoi(last); err == nil && i >= 0 && i < len(x) {
			x[i] = v
		}
	}
}

// remove deletes the field at segs (a map key; a list keeps its length, so
// an item live lacks stays as kumo wrote it).
func remove(root map[string]any, segs []string) {
	parent, _ := tree.Lookup(root, segs[:len(segs)-1])
	if m, ok := parent.(map[string]any); ok {
		delete(m, segs[len(segs)-1])
	}
}
