package engine

import (
	"maps"
	"slices"
	"strconv"
)

// Leaf is one value of a resource's attributes, at the path Diff names a
// changed field with (FieldChange.Path), so that a resource shown whole can
// mark the fields a preview changes.
type Leaf struct {
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Leaves lists r's attribute values, in path order: the values Diff compares
// (not the fields the Kubernetes API server maintains), each sensitive one
// shown as Masked. An empty object is no leaf (Diff does not tell it from a
// missing one); an empty list is one.
func Leaves(r Resource) []Leaf {
	masked := MaskSensitive(r)
	var out []Leaf
	leaves(nil, comparableAttrs(r.Type, masked.Attributes), &out)
	return out
}

func leaves(path []string, v any, out *[]Leaf) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			leaves(append(path, keySegment(k, len(path) == 0)), x[k], out)
		}
		return
	case []any:
		if len(x) > 0 {
			for i, e := range x {
				leaves(append(path, "["+strconv.Itoa(i)+"]"), e, out)
			}
			return
		}
	}
	*out = append(*out, Leaf{Path: joinPath(path), Value: v})
}
