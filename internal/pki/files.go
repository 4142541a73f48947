package pki

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/kumoproj/kumo/internal/privfile"
)

// HomeOwner is the subject of the account that owns the home directory:
// "local:<username>" ("local:uid<N>" if the account has no name).
func HomeOwner(home string) (string, error) {
	fi, err := os.Stat(home)
	if err != nil {
		return "", fmt.Errorf("kumo PKI: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("kumo PKI: cannot tell who owns %s", home)
	}
	uid := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		return LocalPrefix + u.Username, nil
	}
	return LocalPrefix + "uid" + uid, nil
}

// checkPrivate refuses a PKI directory that belongs to another account, and
// closes one that others could enter: its keys are what keeps them out.
func checkPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("kumo PKI: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("kumo PKI: %s belongs to uid %d, not to this account (uid %d): use a kumo home of your own (KUMO_HOME, --home)", dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("kumo PKI: make %s private: %w", dir, err)
		}
	}
	return nil
}

// lock takes an exclusive flock on path, waiting for another process that
// is creating or renewing the PKI.
func lock(path string) (func(), error) {
	unlock, err := privfile.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("kumo PKI: lock %s: %w", path, err)
	}
	return unlock, nil
}

// writeAtomic writes data to path whole (privfile.Replace).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := privfile.Replace(path, data, mode); err != nil {
		return fmt.Errorf("kumo PKI: write %s: %w", path, err)
	}
	return nil
}
