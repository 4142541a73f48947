package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// ErrNotFound is wrapped by the errors of records the backend does not hold
// (a release, a workspace, a report, a run's log).
var ErrNotFound = backend.ErrNotFound

// notFound is an error saying what is missing, wrapping ErrNotFound
// without adding its text.
func notFound(format string, args ...any) error {
	return &quietError{msg: fmt.Sprintf(format, args...), target: ErrNotFound}
}

// quietError says msg and wraps target without adding its text.
type quietError struct {
	msg    string
	target error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.target }

// ErrRequestReused is wrapped by StartOnce's error when the key was used
// before for another request (another fingerprint).
var ErrRequestReused = errors.New("the idempotency key was used for another request")

// ErrRequestInProgress is wrapped by StartOnce's error when the request
// with that key is still starting its run, or died before it recorded
// which run it started.
var ErrRequestInProgress = errors.New("the request with this idempotency key has not recorded its run")

// StartOnce starts a run with start unless a request named key (a name:
// the caller hashes who asked and their idempotency key) started one
// before; then it returns that run and first is false, starting none. The
// record lives in the backend, so it holds across processes and restarts.
// fingerprint identifies what was asked: the same key with another
// fingerprint is refused (ErrRequestReused).
func (c *Client) StartOnce(ctx context.Context, key, fingerprint string, start func(context.Context) (*Run, error)) (run *Run, first bool, err error) {
	rec := backend.RequestRecord{Key: key, Fingerprint: fingerprint, Created: time.Now().UTC()}
	prior, err := c.backend.ClaimRequest(ctx, rec)
	if errors.Is(err, backend.ErrExists) {
		switch {
		case prior.Fingerprint != fingerprint:
			return nil, false, fmt.Errorf("%w (first used at %s)", ErrRequestReused, prior.Created.Format(time.RFC3339))
		case prior.RunID == "":
			return nil, false, fmt.Errorf("%w (first used at %s): retry later; if it stays so, its run may or may not have started: list the runs, and use a new key", ErrRequestInProgress, prior.Created.Format(time.RFC3339))
		}
		if _, err := c.dial(ctx); err != nil {
			return nil, false, err
		}
		return &Run{c: c, Operation: prior.Operation, WorkflowID: prior.WorkflowID, RunID: prior.RunID}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	run, err = start(ctx)
	if err != nil {
		// Nothing started: the request may be retried with its key.
		if derr := c.backend.DeleteRequest(context.WithoutCancel(ctx), key); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, false, err
	}
	rec.RunID, rec.WorkflowID, rec.Operation = run.RunID, run.WorkflowID, run.Operation
	if err := c.backend.PutRequest(context.WithoutCancel(ctx), rec); err != nil {
		return run, true, fmt.Errorf("run %s started, but its idempotency key was not recorded: %w", run.RunID, err)
	}
	return run, true, nil
}
