// Package runtime defines the interface between kumo and one kind of infrastructure.
// Implementations live in subpackages (kubernetes, terraform); they do the I/O, the engine
// and the workflows only see this interface.
package runtime

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/engine"
)

// Runtime applies, reads and deletes the resources of one engine.Type.
// Every method is idempotent: callers retry after crashes.
type Runtime interface {
	// Apply makes the resource exist as desired and returns it as the
	// infrastructure now has it. With DryRun nothing changes: the result is what an
	// apply would produce (server defaults included). A failed apply may return,
	// with its error, the resource as the failure left it (Terraform: an object
	// created but tainted), for the caller to record.
	Apply(ctx context.Context, desired *engine.Resource, opts ApplyOptions) (*engine.Resource, error)
	// Read returns the resource as it is live, or nil (and no error) when absent.
	Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error)
	// Delete removes the resource and returns once it is gone. Deleting an absent
	// resource succeeds.
	Delete(ctx context.Context, res *engine.Resource) error
}

// Previewer is implemented by runtimes that read a resource and dry-run its
// apply in one step (Terraform: one plan refreshes and plans). live and planned
// are what Read and Apply with DryRun would return.
type Previewer interface {
	Preview(ctx context.Context, desired *engine.Resource) (live, planned *engine.Resource, err error)
}

// ApplyOptions tune one Apply.
type ApplyOptions struct {
	DryRun bool
}

// permanentError marks a failure that retrying cannot fix (invalid object, unknown kind).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err (or an error it wraps) was marked Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
