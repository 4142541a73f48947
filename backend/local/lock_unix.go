//go:build unix

package local

import (
	"fmt"

	"github.com/kumoproj/kumo/internal/privfile"
)

// lockFile takes an exclusive flock on path (privfile.Lock) and returns the
// function that releases it: it excludes other processes and other
// goroutines of this one alike.
func lockFile(path string) (unlock func(), err error) {
	unlock, err = privfile.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return unlock, nil
}
