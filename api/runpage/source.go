package runpage

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// ClientSource reads runs through c, as `kumo run show` and `kumo release
// show` do: a run from Temporal (through kumo's frontend, which authorizes
// the caller ctx names), its release from the backend.
func ClientSource(c *client.Client) Source { return clientSource{c} }

type clientSource struct{ c *client.Client }

func (s clientSource) Run(ctx context.Context, id string) (*client.RunDetails, *client.RunPlan, error) {
	d, plan, err := s.c.ShowRunPlan(ctx, "", id)
	var denied *serviceerror.PermissionDenied
	switch {
	case errors.Is(err, client.ErrNoRun):
		return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.As(err, &denied):
		return nil, nil, fmt.Errorf("%w: %w", ErrForbidden, err)
	}
	return d, plan, err
}

func (s clientSource) Release(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	return s.c.Release(ctx, project, workspace, revision)
}
