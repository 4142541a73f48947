package runpage

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// Authorizer decides whether the caller whose credentials ctx carries may
// see the runs of project and workspace: nil if so, else an error naming who,
// what and where (an *authz.DeniedError). The API that serves the pages
// passes its policy's decision, the one its own run routes make.
type Authorizer func(ctx context.Context, project, workspace string) error

// ClientSource reads runs through c, as `kumo run show` and `kumo release
// show` do: a run from Temporal (through kumo's frontend, when the caller's
// credentials are forwarded to it), then, only if may allows the caller the
// run's project and workspace, its release from the backend, which knows no
// caller. With may nil, every run is refused: the pages are served only
// behind the API's authentication and policy.
func ClientSource(c *client.Client, may Authorizer) Source { return clientSource{c, may} }

type clientSource struct {
	c   *client.Client
	may Authorizer
}

func (s clientSource) Run(ctx context.Context, id string) (*client.RunDetails, *client.RunPlan, error) {
	if s.may == nil {
		return nil, nil, fmt.Errorf("%w: the run pages are served without an authorizer", ErrForbidden)
	}
	d, plan, err := s.c.ShowRunPlan(ctx, "", id)
	var denied *serviceerror.PermissionDenied
	switch {
	case errors.Is(err, client.ErrNoRun):
		return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.As(err, &denied):
		return nil, nil, fmt.Errorf("%w: %w", ErrForbidden, err)
	case err != nil:
		return nil, nil, err
	}
	if err := s.may(ctx, d.Project, d.Workspace); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrForbidden, err)
	}
	return d, plan, nil
}

func (s clientSource) Release(ctx context.Context, project, workspace string, revision int) (*engine.Release, error) {
	return s.c.Release(ctx, project, workspace, revision)
}
