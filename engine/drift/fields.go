package drift

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kubernetes compares the server-side apply dry-run of the recorded object with
// the live object, both as the apiserver returned them, managedFields included.
// It walks the fields manager owns in the dry-run (its Apply entry in
// metadata.managedFields): a field whose dry-run value (what kumo would apply,
// normalized by the apiserver) differs from the live one is drift, owned now by
// whichever manager's entry in live holds it. Fields outside that set (server
// defaults, other managers' own fields) are never looked at.
func Kubernetes(dryRun, live map[string]any, manager string) ([]Field, error) {
	set, err := appliedSet(dryRun, manager)
	if err != nil {
		return nil, err
	}
	set = foldWriteOnly(dryRun, set)
	var leaves []leaf
	walk(set, dryRun, live, true, "", "", &leaves)
	if len(leaves) == 0 {
		return nil, nil
	}
	owners := ownersOf(live)
	var out []Field
	for _, l := range leaves {
		if l.liveHas && equal(l.dry, l.live) {
			continue
		}
		if !l.liveHas { // a field that is gone has no owner
			out = append(out, Field{Path: l.pointer, Recorded: l.dry, Absent: true})
			continue
		}
		// A leaf of the field set can still be a map or a list: an atomic
		// list (a CRD's list without x-kubernetes-list-type, Kyverno's
		// spec.rules) or a granular map is owned whole. Its differences are
		// named field by field inside it, as a preview names them, not as
		// the whole value.
		owner := owners.of(l.key, manager)
		for _, f := range Values(wrap(l.dry), wrap(l.live)) {
			f.Path = l.pointer + strings.TrimPrefix(f.Path, "/"+wrapKey)
			f.Manager = owner
			out = append(out, f)
		}
	}
	return out, nil
}

// wrapKey holds a value of any type as the one key of a tree Values compares.
const wrapKey = "v"

func wrap(v any) map[string]any { return map[string]any{wrapKey: v} }

// appliedSet returns the fieldsV1 set of manager's Apply entry in obj. The
// apiserver records no entry for a manager that owns no fields (an object with
// only a name, as a bare Namespace is): then there is nothing to compare.
func appliedSet(obj map[string]any, manager string) (map[string]any, error) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return nil, fmt.Errorf("the dry-run result has no metadata")
	}
	for _, e := range managedFields(obj) {
		if e["manager"] == manager && e["operation"] == "Apply" {
			set, _ := e["fieldsV1"].(map[string]any)
			return set, nil
		}
	}
	return nil, nil
}

// foldWriteOnly maps the fields of set that the apiserver never stores as they
// were applied onto the fields it stores them in. A core Secret's stringData is
// write-only: the apiserver folds each key into data (base64) and keeps no
// stringData, so the dry run and live have none and the fields kumo owns under
// f:stringData would be skipped, leaving a patched password unseen. Compared as
// the same keys of data, the dry run's data (the applied value, encoded by the
// apiserver) meets live data. stringData is the only write-only form kumo
// applies: the other objects kumo writes are stored as applied. set is not
// changed.
func foldWriteOnly(obj, set map[string]any) map[string]any {
	if !coreSecret(obj) {
		return set
	}
	return fold(set, "f:stringData", "f:data", func(k string, v any) (any, bool) {
		return v, k != "." // a key in both is one value: stringData's wins on write
	})
}

func coreSecret(obj map[string]any) bool {
	return obj["apiVersion"] == "v1" && obj["kind"] == "Secret"
}

// fold moves the entries of m's map from into its map to, each through
// convert (false: left out), an entry of from replacing one of to with the
// same key. m without from is returned as it is; m is never changed.
func fold(m map[string]any, from, to string, convert func(k string, v any) (any, bool)) map[string]any {
	src, ok := m[from].(map[string]any)
	if !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, from)
	merged := map[string]any{}
	if d, ok := m[to].(map[string]any); ok {
		maps.Copy(merged, d)
	}
	for k, v := range src {
		if c, ok := convert(k, v); ok {
			merged[k] = c
		}
	}
	out[to] = merged
	return out
}

func managedFields(obj map[string]any) []map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// leaf is one field of a field set, with its value on both sides. key names it
// by the set's own keys (f:, k:, v:, i:), which do not depend on list order, so
// the same field is found in another manager's set; pointer is the JSON
// pointer to it in the dry-run object.
type leaf struct {
	key, pointer string
	dry, live    any
	liveHas      bool
}

// walk follows a fieldsV1 set through the dry-run value and the live value. A
// set entry with no children (or only ".") is a leaf, compared whole; so is an
// entry whose live value is gone, so a deleted map or list item is one field.
func walk(set map[string]any, dry, live any, liveHas bool, key, ptr string, out *[]leaf) {
	keys := make([]string, 0, len(set))
	for k := range set {
		if k != "." {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		child, _ := set[k].(map[string]any)
		seg, dv, dok := step(k, dry, nil)
		if !dok {
			continue // kumo owns it but the dry run has no value: nothing to compare
		}
		_, lv, lok := step(k, live, nil)
		lok = lok && liveHas
		ckey, cptr := key+"\n"+k, ptr+"/"+seg
		if isLeaf(child) || !lok {
			*out = append(*out, leaf{key: ckey, pointer: cptr, dry: dv, live: lv, liveHas: lok})
			continue
		}
		walk(child, dv, lv, true, ckey, cptr, out)
	}
}

func isLeaf(set map[string]any) bool {
	for k := range set {
		if k != "." {
			return false
		}
	}
	return true
}

// step resolves one fieldsV1 key in v: f:<name> in a map, k:<json> (the list
// item whose fields equal the key's, a key field the item leaves out taking
// its value from defaults), v:<json> (the set item equal to it), i:<index>.
// It returns the JSON pointer segment, the value and whether v has it.
func step(k string, v any, defaults map[string]string) (seg string, out any, ok bool) {
	kind, arg, _ := strings.Cut(k, ":")
	switch kind {
	case "f":
		m, _ := v.(map[string]any)
		out, ok = m[arg]
		return escape(arg), out, ok
	case "k", "v", "i":
		list, _ := v.([]any)
		i := index(kind, arg, list, defaults)
		if i < 0 {
			return "-", nil, false
		}
		return strconv.Itoa(i), list[i], true
	}
	return escape(k), nil, false
}

func index(kind, arg string, list []any, defaults map[string]string) int {
	if kind == "i" {
		i, err := strconv.Atoi(arg)
		if err != nil || i < 0 || i >= len(list) {
			return -1
		}
		return i
	}
	var want any
	dec := json.NewDecoder(bytes.NewReader([]byte(arg)))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		return -1
	}
	for i, item := range list {
		if kind == "v" && same(want, item) {
			return i
		}
		if kind == "k" && keyMatches(want, item, defaults) {
			return i
		}
	}
	return -1
}

// keyMatches reports whether item is the list item key names, a key field
// item leaves out having its value in defaults (the apiserver defaults it
// before keying the item).
func keyMatches(key, item any, defaults map[string]string) bool {
	km, _ := key.(map[string]any)
	im, ok := item.(map[string]any)
	if !ok || len(km) == 0 {
		return false
	}
	for f, v := range km {
		iv, has := im[f]
		if d, ok := defaults[f]; !has && ok {
			iv = d
		}
		if !same(v, iv) {
			return false
		}
	}
	return true
}

// same compares a value decoded from a fieldsV1 key (json.Number) with one from
// an object (int64, float64, string, ...).
func same(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// escape makes a map key a JSON pointer segment (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// owners maps each field key to the managers whose entry in the live object
// holds it.
type owners map[string][]string

func ownersOf(live map[string]any) owners {
	o := owners{}
	for _, e := range managedFields(live) {
		name, _ := e["manager"].(string)
		set, _ := e["fieldsV1"].(map[string]any)
		var leaves []leaf
		walk(set, live, live, true, "", "", &leaves)
		for _, l := range leaves {
			o[l.key] = append(o[l.key], name)
		}
	}
	return o
}

// of names the owner of key (or of the nearest enclosing field a manager holds
// whole), preferring a manager other than self: when kumo shares a field with
// another manager, that one changed it.
func (o owners) of(key, self string) string {
	for k := key; k != ""; {
		if ms := o[k]; len(ms) > 0 {
			for _, m := range ms {
				if m != self {
					return m
				}
			}
			return ms[0]
		}
		i := strings.LastIndex(k, "\n")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return ""
}
