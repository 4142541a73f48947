package api

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
)

// problemOf is the problem an error answers with: the API's own problems
// as they are, a refusal by the policy naming who, what and where, and the
// client's and Temporal's errors by what they mean.
func problemOf(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var denied *authz.DeniedError
	if errors.As(err, &denied) {
		p := newProblem(ProblemForbidden, denied.Error())
		p.Subject, p.Action, p.Project, p.Workspace = denied.Subject, string(denied.Action), denied.Project, denied.Workspace
		return p
	}
	var (
		permission *serviceerror.PermissionDenied
		notFound   *serviceerror.NotFound
		unavail    *serviceerror.Unavailable
	)
	switch {
	case errors.As(err, &permission):
		// The frontend's own refusal, which names who, what and where too.
		return newProblem(ProblemForbidden, err.Error())
	case status.Code(err) == codes.Unauthenticated:
		return newProblem(ProblemUnauthenticated, err.Error())
	case errors.Is(err, client.ErrNoRun), errors.Is(err, client.ErrNotFound), errors.As(err, &notFound):
		return newProblem(ProblemNotFound, err.Error())
	case errors.Is(err, client.ErrBusy):
		return newProblem(ProblemBusy, err.Error())
	case errors.Is(err, client.ErrNotAnswerable):
		return newProblem(ProblemNotAnswerable, err.Error())
	case errors.Is(err, client.ErrRunEnded):
		return newProblem(ProblemRunEnded, err.Error())
	case errors.Is(err, client.ErrRequestReused):
		return newProblem(ProblemIdempotencyReused, err.Error())
	case errors.Is(err, client.ErrRequestInProgress):
		return newProblem(ProblemIdempotencyPending, err.Error())
	case errors.As(err, &unavail), errors.Is(err, client.ErrNoServer), errors.Is(err, context.DeadlineExceeded):
		return newProblem(ProblemUnavailable, err.Error())
	}
	return newProblem(ProblemInternal, err.Error())
}

// invalid is a 400 problem for a bad parameter or body.
func invalid(err error) *Problem { return newProblem(ProblemInvalidRequest, err.Error()) }

// refused is a 422 problem: the client would not do what was asked (a spec
// it finds wrong, nothing to destroy).
func refused(err error) error {
	if p := problemOf(err); p.Type != ProblemInternal {
		return p
	}
	return newProblem(ProblemRefused, err.Error())
}
