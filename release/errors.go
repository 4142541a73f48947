package release

import (
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// Kinds of failure. Test for them with errors.Is; the message of the error
// returned is unchanged by its kind.
var (
	// ErrLocked: the latest release is unfinished and its run is still going.
	ErrLocked = errors.New("release locked")
	// ErrNoRelease: the project+workspace has no release (to unlock, to roll back to).
	ErrNoRelease = errors.New("no release")
	// ErrNotLocked: there is nothing to unlock, the latest release is final.
	ErrNotLocked = errors.New("release not locked")
	// ErrFinal: the release is already finished and cannot move to another phase.
	ErrFinal = errors.New("release already final")
	// ErrNoTarget: the rollback target does not exist or may not be rolled back to.
	ErrNoTarget = errors.New("no rollback target")
	// ErrInvalid: the spec (or a settings value) is wrong; retrying cannot help.
	ErrInvalid = errors.New("invalid spec")
	// ErrResourceFailed: one resource failed permanently (the runtime refused it).
	ErrResourceFailed = errors.New("resource failed")
	// ErrGenerate: generation cannot succeed by retrying (bad files, an unknown
	// workspace, a failing generator).
	ErrGenerate = errors.New("generate failed")
	// ErrRunUnknown: the run checker's Temporal has no such run. It may be
	// running on another machine's Temporal that shares the backend, so it is
	// not taken for ended; only `kumo release unlock` closes its release.
	ErrRunUnknown = errors.New("run unknown to this Temporal")
	// ErrBackend: storing to the backend failed; a retry may succeed.
	ErrBackend = errors.New("backend error")
)

// forGood are the kinds of failure no retry mends; the activities make them
// non-retryable Temporal errors. Any other error (ErrBackend, a network
// failure) may pass when tried again.
var forGood = []error{ErrLocked, ErrFinal, ErrInvalid, ErrResourceFailed, ErrGenerate, ErrNoRelease}

// FailedForGood reports whether err is of a kind no retry mends.
func FailedForGood(err error) bool {
	for _, kind := range forGood {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// Error is a failure of one kind. Its message is Err's alone, so wrapping an
// error in a kind never changes what the user reads.
type Error struct {
	Kind error
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap exposes both the kind (for errors.Is) and the cause.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

func kindErr(kind, err error) error { return &Error{Kind: kind, Err: err} }

func kindf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// LockedError says which run holds the stack.
type LockedError struct {
	Release *engine.Release
	msg     string
}

func (e *LockedError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lockedElsewhere: the release's run is not in this Temporal; it may be alive in
// another one (two machines with their own embedded servers and one S3 backend).
func lockedElsewhere(r *engine.Release) error {
	return &LockedError{Release: r, msg: fmt.Sprintf("%s/%s: revision %d is %s, locked by run %s (workflow %s), which this Temporal does not know: it may be running on another machine that shares the backend; wait for it to finish, or close the release with `kumo release unlock` if that run is gone",
		r.Project, r.Workspace, r.Revision, r.Phase, r.RunID, r.WorkflowID)}
}

func locked(r *engine.Release) error {
	return &LockedError{Release: r, msg: fmt.Sprintf("%s/%s: revision %d is %s, locked by run %s (workflow %s), which is still running; wait for it to finish, or run `kumo resume` if the kumo that started it was killed",
		r.Project, r.Workspace, r.Revision, r.Phase, r.RunID, r.WorkflowID)}
}
