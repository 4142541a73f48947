//go:build unix

package privfile

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive flock on path (created if missing, mode 0600),
// waiting for its holder, and returns the function that releases it. flock
// locks belong to the open file, so the lock excludes other processes and
// other goroutines of this one alike, and the kernel drops it if the process
// dies.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
