// Package keys holds the one map helper diffs share: walking two maps side by
// side in a stable order.
package keys

import "slices"

// Union returns the keys of a and b, each once, sorted: the order in which
// diffs walk two maps side by side, so their output is stable.
func Union[A, B any](a map[string]A, b map[string]B) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, dup := a[k]; !dup {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
