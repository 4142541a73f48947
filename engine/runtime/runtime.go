// Package runtime defines the interface between kumo and one kind of infrastructure.
// Implementations live in subpackages (kubernetes, terraform); they do the I/O, the engine
// and the workflows only see this interface.
package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
)

// Runtime applies, reads and deletes the resources of one engine.Type.
// Every method is idempotent: callers retry after crashes.
//
// The contract every implementation keeps (engine/runtime/runtimetest checks it):
//   - a resource that does not exist is reported by Read as an error wrapping
//     ErrNotFound (errors.Is), never as a nil resource with no error;
//   - errors that retrying cannot fix (an invalid object, an unknown kind, a
//     rejected argument) are marked Permanent; errors that retrying may fix (a
//     server overloaded or restarting, a timeout, a refused connection) are not;
//   - a cancelled or expired context ends every method with an error that wraps
//     the context's error, not marked Permanent.
type Runtime interface {
	// Apply makes the resource exist as desired and returns it as the
	// infrastructure now has it. With DryRun nothing changes: the result is what an
	// apply would produce (server defaults included). A failed apply may return,
	// with its error, the resource as the failure left it (Terraform: an object
	// created but tainted), for the caller to record.
	Apply(ctx context.Context, desired *engine.Resource, opts ApplyOptions) (*engine.Resource, error)
	// Read returns the resource as it is live. When it is absent the error wraps
	// ErrNotFound (see NotFound).
	Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error)
	// Delete removes the resource and returns once it is gone. Deleting an absent
	// resource succeeds.
	Delete(ctx context.Context, res *engine.Resource) error
}

// DeleteStarter is implemented by runtimes whose deletes can be issued first
// and waited for afterwards (Kubernetes: an object held by finalizers), so
// that a batch of deletes waits for its resources together instead of one
// after another.
type DeleteStarter interface {
	// StartDelete issues res's deletion as Delete does. It returns a nil wait
	// when the resource is gone already (or never existed), else a wait that
	// returns once it is gone, failing as Delete's wait would (a timeout names
	// what holds the resource). StartDelete then wait is Delete.
	StartDelete(ctx context.Context, res *engine.Resource) (wait func(context.Context) error, err error)
}

// Previewer is implemented by runtimes that read a resource and dry-run its
// apply in one step (Terraform: one plan refreshes and plans). live and planned
// are what Read and Apply with DryRun would return, except that an absent
// resource is a nil live, not an ErrNotFound error: a preview of a resource
// still to be created succeeds.
type Previewer interface {
	Preview(ctx context.Context, desired *engine.Resource) (live, planned *engine.Resource, err error)
}

// ApplyOptions tune one Apply.
type ApplyOptions struct {
	DryRun bool
	// ForceConflicts takes over fields another owner manages (Kubernetes:
	// server-side apply with force). Without it an apply that would change such
	// a field fails with a Permanent error naming the fields and owners.
	ForceConflicts bool
}

// Managers is implemented by runtimes whose objects record who manages them
// (Kubernetes: the field managers in metadata.managedFields). A preview names
// them when kumo takes over an object it did not create.
type Managers interface {
	// FieldManagers returns the managers of the live resource other than
	// kumo, sorted; none when it is absent.
	FieldManagers(ctx context.Context, res *engine.Resource) ([]string, error)
}

// ErrNotFound is what Read's error wraps when the resource does not exist.
var ErrNotFound = errors.New("not found")

// NotFound returns the error Read returns for an absent resource: it names the
// resource and wraps ErrNotFound.
func NotFound(id string) error {
	return fmt.Errorf("read %s: %w", id, ErrNotFound)
}

// Interrupted returns nil while ctx is live, else the error a method returns
// when its context ended before it started: "<op> <id>: <ctx.Err()>". Runtimes
// call it on entry, so a cancelled caller is told so even by an operation that
// would have needed no I/O.
func Interrupted(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, id, err)
	}
	return nil
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

// HookRunLabel labels each hook object kumo creates with its run and hook
// (a hash): a retried step finds the object it created instead of creating
// another.
const HookRunLabel = "kumoproj.io/hook-run"

// HookRunner is implemented by runtimes that run hooks (engine.Hook:
// Kubernetes objects created, waited for and deleted, never managed).
type HookRunner interface {
	// CreateHook creates hook, labelled HookRunLabel=run, and returns it as
	// created (its ID naming the object's real name, for generateName);
	// the object of an earlier attempt with the same run label is returned
	// instead of creating another. An object of the same name from
	// elsewhere is a Permanent error naming it.
	CreateHook(ctx context.Context, hook *engine.Resource, run string) (*engine.Resource, error)
	// WaitHookDone waits until the created hook completed (a Job complete,
	// a Pod succeeded, another kind healthy), failing as Waiter does.
	WaitHookDone(ctx context.Context, hook *engine.Resource, opts WaitOptions) (health.Result, error)
}
