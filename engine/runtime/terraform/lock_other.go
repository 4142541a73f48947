//go:build !unix

package terraform

import (
	"context"
	"sync"
)

var locks sync.Map // path -> *sync.RWMutex

// lockFile locks path for this process only: without flock there is no
// cross-process lock on this platform.
func lockFile(ctx context.Context, path string, exclusive bool) (unlock func(), err error) {
	m, _ := locks.LoadOrStore(path, new(sync.RWMutex))
	mu := m.(*sync.RWMutex)
	if exclusive {
		mu.Lock()
		return mu.Unlock, nil
	}
	mu.RLock()
	return mu.RUnlock, nil
}
