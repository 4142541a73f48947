package runtime

import (
	"context"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

// DriftReader is implemented by runtimes that check many recorded resources
// against live in one go (Kubernetes: one list call per kind and namespace, and
// a server-side apply dry-run per object). Runtimes without it are checked one
// resource at a time through Read.
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
