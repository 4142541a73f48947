package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine/runtime/registry"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// StatusDepth is how many levels of owned objects a status tree shows
// (Deployment → ReplicaSet → Pod is two).
const StatusDepth = 3

// Statuses reads the live status of stacks. Keep one for a --watch: its
// runtimes (clients, discovery) are reused across reads.
type Statuses struct {
	m *release.Manager
}

// Statuses returns a reader of live stack status. It needs no Temporal.
func (c *Client) Statuses() *Statuses {
	return &Statuses{m: release.New(c.backend, registry.New(), nil)}
}

// Read reads every resource of the latest release of project+workspace live,
// with its health and the stack's (the worst); with tree, also the objects
// each owns, StatusDepth levels down.
func (s *Statuses) Read(ctx context.Context, project, workspace string, settings runspec.RuntimeSettings, tree bool) (runspec.StackStatus, error) {
	depth := 0
	if tree {
		depth = StatusDepth
	}
	st, err := s.m.Status(ctx, project, workspace, settings, depth)
	if errors.Is(err, backend.ErrNotFound) {
		return st, fmt.Errorf("no status: %s/%s has no releases", project, workspace)
	}
	return st, err
}
