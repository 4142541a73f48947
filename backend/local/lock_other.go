//go:build !unix

package local

import "sync"

var locks sync.Map // path -> *sync.Mutex

// lockFile serializes writers of this process only: without flock there is no
// cross-process lock on this platform.
func lockFile(path string) (unlock func(), err error) {
	m, _ := locks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}
