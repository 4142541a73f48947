package server

import (
	"fmt"
	"os/user"

	"github.com/kumoproj/kumo/runspec"
)

// OwnerSubject is the subject of the account this process runs as, which owns
// the kumo home it serves: "local:<user name>".
func OwnerSubject() (runspec.Subject, error) {
	u, err := user.Current()
	if err != nil {
		return runspec.Subject{}, fmt.Errorf("who owns this kumo home: %w", err)
	}
	return runspec.Subject{Name: "local:" + u.Username, Verified: true}, nil
}
