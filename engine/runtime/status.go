package runtime

import (
	"context"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
)

// StatusNode is one live object's health and, in a tree, the objects it owns.
type StatusNode struct {
	// ID is the resource's ID; for an owned object, its ID in the same form.
	ID       string        `json:"id"`
	Health   health.Result `json:"health"`
	Children []StatusNode  `json:"children,omitempty"`
}

// StatusReader is implemented by runtimes that read the live health of many
// resources at once (Kubernetes: one list call per kind and namespace, not
// one read per object). With depth > 0 each node also holds the objects it
// owns, down to depth levels (Deployment → ReplicaSet → Pod).
type StatusReader interface {
	Status(ctx context.Context, resources []*engine.Resource, depth int) ([]StatusNode, error)
}
