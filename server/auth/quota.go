package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// SetInFlightCounter gives the interceptor its way of counting a subject's
// runs in flight (a visibility count the server makes once it listens).
// Until it is set, a quota of runs in flight refuses every start it applies
// to: quotas fail closed.
func (i *Interceptor) SetInFlightCounter(count authz.InFlightCounter) {
	i.inFlight.Store(&count)
}

func (i *Interceptor) countInFlight(ctx context.Context, subject string) (int, error) {
	count := i.inFlight.Load()
	if count == nil {
		return 0, errors.New("the server cannot count runs yet")
	}
	return (*count)(ctx, subject)
}

// InFlightQuery is the visibility query that finds subject's running runs;
// a name a query cannot hold verbatim is an error, never an escape.
func InFlightQuery(subject string) (string, error) {
	if strings.ContainsAny(subject, "'\\\"\n") {
		return "", fmt.Errorf("subject %q holds a quote or backslash: its runs cannot be counted for its quota", subject)
	}
	// A run queue is filed under whoever started it with the first run it
	// took; it is not a run: its runs count when they start, each filed
	// under who queued it.
	return fmt.Sprintf("%s = '%s' AND ExecutionStatus = 'Running' AND WorkflowType != '%s'", runspec.AttrStartedBy, subject, runspec.QueueWorkflow), nil
}

// admit takes a start from the caller's quota. The home's owner and kumo's
// own principals are not limited: the owner runs the server, and drift
// schedules start as the system.
func (c *call) admit(action authz.Action, project, workspace, target string) error {
	if c.i.quota == nil || c.p.system || c.p.subject.Name == c.i.pki.Owner() {
		return nil
	}
	err := c.i.quota.Admit(c.ctx, c.p.subject.Name)
	if err == nil {
		return nil
	}
	c.audit(action, project, workspace, target, err)
	// Not ResourceExhausted: the SDK retries that until its deadline, and
	// the caller should hear at once why its run did not start.
	return status.Error(codes.FailedPrecondition, err.Error())
}

// stampStarter files the run under its authenticated starter, replacing any
// value the client set, so that its quota counts it.
func stampStarter(attrs **commonpb.SearchAttributes, subject string) {
	data, err := json.Marshal(subject)
	if err != nil {
		panic(err) // a string always marshals
	}
	if *attrs == nil {
		*attrs = &commonpb.SearchAttributes{}
	}
	if (*attrs).IndexedFields == nil {
		(*attrs).IndexedFields = map[string]*commonpb.Payload{}
	}
	(*attrs).IndexedFields[runspec.AttrStartedBy] = &commonpb.Payload{
		Metadata: map[string][]byte{"encoding": []byte("json/plain"), "type": []byte("Keyword")}, Data: data,
	}
}
