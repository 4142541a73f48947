package backend

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/kumoproj/kumo/engine"
)

// ErrInvalidName is wrapped by the errors ValidateName and ReleaseKey.Validate return.
var ErrInvalidName = errors.New("invalid name")

// MaxNameLength is the longest project or workspace name a backend accepts.
const MaxNameLength = 128

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateName checks a project or workspace name before a backend turns it into a
// path or an object key: it must match ^[A-Za-z0-9][A-Za-z0-9._-]*$, must not be "."
// or "..", and must be at most MaxNameLength long. kind ("project", "workspace")
// names the value in the error, which wraps ErrInvalidName.
func ValidateName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s name is empty", ErrInvalidName, kind)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%w: %s name %q is longer than %d characters", ErrInvalidName, kind, name, MaxNameLength)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %s name %q is not allowed", ErrInvalidName, kind, name)
	case !nameRE.MatchString(name):
		return fmt.Errorf("%w: %s name %q must start with a letter or digit and contain only letters, digits, '.', '_' and '-'", ErrInvalidName, kind, name)
	}
	return nil
}

// Validate checks the project and workspace names and that the revision is at least 1.
func (k ReleaseKey) Validate() error {
	if err := ValidateName("project", k.Project); err != nil {
		return err
	}
	if err := ValidateName("workspace", k.Workspace); err != nil {
		return err
	}
	if k.Revision < 1 {
		return fmt.Errorf("%w: %s: revision must be at least 1", ErrInvalidName, k)
	}
	return nil
}

// String renders the key as project/workspace#revision, for messages.
func (k ReleaseKey) String() string {
	return k.Project + "/" + k.Workspace + "#" + strconv.Itoa(k.Revision)
}

// KeyOf returns the ReleaseKey naming r.
func KeyOf(r *engine.Release) ReleaseKey {
	return ReleaseKey{Project: r.Project, Workspace: r.Workspace, Revision: r.Revision}
}
