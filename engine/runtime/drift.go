package runtime

import (
	"context"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

// DriftReader is implemented by runtimes that check many recorded resources
// against live in one go (Kubernetes: one list call per kind and namespace, and
// a server-side apply dry-run only of the objects whose comparison with live is
// not conclusive). Runtimes without it are checked one resource at a time
// through Read.
type DriftReader interface {
	// Drift compares each recorded desired resource with live and returns one
	// result per resource, in order. A resource that cannot be read is an
	// drift.Error result, never an error of the call.
	Drift(ctx context.Context, desired []*engine.Resource, opts DriftOptions) []drift.Result
}

// DriftOptions tune one DriftReader.Drift call.
type DriftOptions struct {
	// Parallelism bounds the calls in flight (default 10).
	Parallelism int
}

// ManagedReader is implemented by runtimes whose objects record which writer
// owns which field, for ignore rules that name field managers.
type ManagedReader interface {
	// ReadManaged is Read with the object's field ownership kept
	// (Kubernetes: metadata.managedFields).
	ReadManaged(ctx context.Context, res *engine.Resource) (*engine.Resource, error)
}

// LiveReader is implemented by runtimes that read many resources live in one
// go (Kubernetes: one list call per kind and namespace) and can tell, without
// a dry-run, that applying a resource as desired would change nothing.
type LiveReader interface {
	// ReadLive reads each desired resource live and returns one result per
	// resource, in order.
	ReadLive(ctx context.Context, desired []*engine.Resource, opts ReadLiveOptions) []Live
}

// ReadLiveOptions tune one ReadLive call.
type ReadLiveOptions struct {
	// Snapshot, when set, names one view of the infrastructure that several
	// calls share (a run's preview, read in batches): what one call listed is
	// reused by the next calls with the same Snapshot for a short while,
	// instead of listing a namespace once per batch.
	Snapshot string
	// Plan asks for Live.Planned (a preview's read): computing it may cost
	// the runtime a few requests of its own per call or snapshot.
	Plan bool
	// Changing, with Plan, says the desired objects are likely not those
	// live (the run's spec is not the last release's): the runtime asks what
	// planning needs alongside its reads rather than once a read finds a
	// change, at the cost of those requests when nothing changed after all.
	Changing bool
}

// Live is one resource as LiveReader.ReadLive found it.
type Live struct {
	// Resource is the live resource as Read returns it; nil when absent.
	Resource *engine.Resource
	// Unchanged: an apply of the desired resource would leave it as it is.
	// false when that is not known for sure: ask with a dry-run.
	Unchanged bool
	// Planned: when it changes, what an apply of the desired resource that
	// takes over conflicting fields (ApplyOptions.ForceConflicts) would make
	// of it, as a dry-run of that apply would return it, computed without
	// one because the runtime is sure of it; nil when not sure: ask with a
	// dry-run. Only with ReadLiveOptions.Plan.
	Planned *engine.Resource
	// Err: the resource could not be read this way (read it alone).
	Err error
}
