//go:build unix

package terraform

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes a flock on path (created if missing), exclusive or shared, and
// returns the function that releases it; it gives up when ctx ends. flock locks
// belong to the open file, so the lock excludes other processes and other
// goroutines of this one alike.
func lockFile(ctx context.Context, path string, exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
