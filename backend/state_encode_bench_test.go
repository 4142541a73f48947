package backend

import (
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// BenchmarkEncodeState: encoding the state a run of n ConfigMaps finishes
// with against its spec (each resource as the apiserver returned it: an
// identity, a resourceVersion, a creation time), as FinishRelease does.
//
//	go test -run '^$' -bench EncodeState ./backend
func BenchmarkEncodeState(b *testing.B) {
	for _, n := range []int{200, 10000} {
		spec, state := &engine.Spec{}, make([]engine.Resource, n)
		for i := range n {
			r := configMap(fmt.Sprintf("cm-%05d", i), fmt.Sprint(i))
			spec.Resources = append(spec.Resources, r)
			state[i] = live(r, fmt.Sprintf("%032x", i), 1000+i)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := encodeState(spec, state, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
