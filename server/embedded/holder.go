package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockedError is the error Start returns when another Server, in this process
// or another one, holds the directory. It wraps ErrLocked.
type LockedError struct {
	Dir string
	// PID of the holder as it recorded itself; 0 if unknown.
	PID int
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another kumo process%s is using the Temporal database at %s; wait for it to finish or stop it", e.Holder(), e.Dir)
}

// Holder is " (pid N)", or "" if the pid is unknown, for messages.
func (e *LockedError) Holder() string {
	if e.PID > 0 {
		return fmt.Sprintf(" (pid %d)", e.PID)
	}
	return ""
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Holder says whether a live process holds dir's lock (a running Server) and
// which pid that process recorded. It does not take the lock: it asks for a
// shared lock, which fails at once while a Server holds its exclusive one.
// (If no one holds it, the shared lock is held for a moment and released; a
// Start in that moment reports ErrLocked, as with any other holder.)
func Holder(dir string) (pid int, held bool, err error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("open lock file: %w", err)
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, false, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return lockHolderPID(path), true, nil
	default:
		return 0, false, fmt.Errorf("check lock %s: %w", path, err)
	}
}

// lockHolderPID reads the pid the holder wrote into the lock file; 0 if none.
func lockHolderPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}
