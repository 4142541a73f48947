// Package tree walks decoded JSON/YAML values (maps, lists, scalars) by path:
// the one lookup that references ($kumo_path) and ignore rules (JSON
// pointers) share.
package tree

import "strconv"

// Lookup follows path through maps (by key) and lists (by numeric index) and
// reports whether every step was there.
func Lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
