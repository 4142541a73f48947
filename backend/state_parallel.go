package backend

import (
	"runtime"
	"sync"
)

// minPerRange is the fewest resources one goroutine of sideBySide takes: a
// state of fewer than twice that is done on the caller's goroutine alone,
// where starting another would cost more than it saves.
const minPerRange = 64

// sideBySide returns do's result for each index of [0, n), computed over
// contiguous ranges in index order, one goroutine each (as many as the
// process runs at once and the resources fill), each range with a tree
// writer of its own. Encoding or rebuilding a state is the same work for
// each resource independently, and a run's finish waits for it with the
// cluster's work over. A range stops at its first failure, so the error
// returned, the first range's that failed, is that of the lowest index that
// failed, whichever goroutine ran first.
func sideBySide[T any](n int, do func(tree *treeWriter, i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	run := func(lo, hi int) error {
		var tree treeWriter
		for i := lo; i < hi; i++ {
			v, err := do(&tree, i)
			if err != nil {
				return err
			}
			out[i] = v
		}
		return nil
	}
	parts := min(runtime.GOMAXPROCS(0), n/minPerRange)
	if parts <= 1 {
		return out, run(0, n)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { errs[p] = run(p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
