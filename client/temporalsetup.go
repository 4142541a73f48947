package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/runspec"
)

// attributesServedWithin bounds how long setup waits for the frontend to
// serve search attributes it has just registered.
const attributesServedWithin = 2 * time.Minute

// waitAttributesServed waits until the frontend accepts a visibility query
// naming every kumo search attribute. Registering them is not enough: a
// frontend serves a namespace's attributes from a cache it refreshes on its
// own schedule (SQL visibility keeps them in the namespace's configuration),
// and until then a run's start is refused with "no mapping defined for
// search attribute". Setup returns once a run can start.
func waitAttributesServed(ctx context.Context, tc sdkclient.Client, namespace string) error {
	query := attributesQuery()
	ctx, cancel := context.WithTimeout(ctx, attributesServedWithin)
	defer cancel()
	for {
		_, err := tc.WorkflowService().CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: query})
		var invalid *serviceerror.InvalidArgument
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &invalid):
			return fmt.Errorf("check that namespace %s serves kumo's search attributes: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s does not serve kumo's search attributes %s after registering them (the frontend still answers: %v)", namespace, attributesServedWithin, err)
		case <-time.After(time.Second):
		}
	}
}

// attributesQuery is a visibility query naming every kumo search attribute
// with a value of its type.
func attributesQuery() string {
	terms := make([]string, len(runspec.SearchAttributes))
	for i, a := range runspec.SearchAttributes {
		value := "''"
		switch a.Type {
		case runspec.Int:
			value = "0"
		case runspec.Bool:
			value = "false"
		}
		terms[i] = a.Name + " = " + value
	}
	return strings.Join(terms, " AND ")
}
