package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/release"
)

// Error types the workflows and the client recognise.
const (
	ErrTypeLocked    = "ReleaseLocked"
	ErrTypeInvalid   = "InvalidSpec"
	ErrTypeNode      = "ResourceFailed"
	ErrTypeGenerate  = "GenerateFailed"
	ErrTypeBackend   = "BackendError"
	ErrTypeNoRelease = "NoRelease"
	// ErrTypeWorkerStopping: a local step was asked of a worker that is
	// shutting down; it did nothing, and the workflow runs the step as an
	// ordinary activity, which a worker still serving the queue takes.
	ErrTypeWorkerStopping = "WorkerStopping"
)

// errorTypes maps each kind of release failure to its Temporal error type,
// retryable unless release.FailedForGood says no retry mends it; a kind not
// listed is retried as any other error.
var errorTypes = []struct {
	kind error
	typ  string
}{
	{release.ErrLocked, ErrTypeLocked},
	{release.ErrFinal, ErrTypeLocked},
	{release.ErrInvalid, ErrTypeInvalid},
	{release.ErrResourceFailed, ErrTypeNode},
	{release.ErrGenerate, ErrTypeGenerate},
	{release.ErrBackend, ErrTypeBackend},
	{release.ErrNoRelease, ErrTypeNoRelease},
}

// temporalError is the one place domain errors become Temporal errors: a
// failure of a known kind becomes an application error of its type, with the
// same message, retryable or not; any other error (a backend or network
// failure) stays as it is, and Temporal retries it.
func temporalError(err error) error {
	if err == nil {
		return nil
	}
	for _, t := range errorTypes {
		if errors.Is(err, t.kind) {
			if !release.FailedForGood(t.kind) {
				return temporal.NewApplicationError(err.Error(), t.typ)
			}
			return temporal.NewNonRetryableApplicationError(err.Error(), t.typ, nil)
		}
	}
	return err
}
