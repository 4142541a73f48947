package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestSquatterIsReportedAndCleared: a workflow of another type started under a
// stack's lock ID blocks its applies; kumo names it (instead of calling it a
// run to wait for or resume), and `release unlock` terminates it, after which
// applies go through again.
func TestSquatterIsReportedAndCleared(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ctx := context.Background()
	c, err := Open(Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc, err := c.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := runspec.MutatingWorkflowID("p", engine.DefaultWorkspace)
	// kumo's frontend refuses to start a workflow of another type, even to
	// the home's owner: a squatter now comes only from a database older
	// than the frontend's authorization, planted here as Temporal's own
	// system worker (the one principal the frontend does not check).
	if _, err := tc.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: "elsewhere"}, "Squatter"); err == nil ||
		!strings.Contains(err.Error(), `workflow type "Squatter" is not kumo's`) {
		t.Fatalf("a squatter through the frontend: %v, want refused", err)
	}
	sysTLS, err := c.server.ClientTLS(c.server.PKI().System())
	if err != nil {
		t.Fatal(err)
	}
	sys, err := sdkclient.Dial(sdkclient.Options{HostPort: c.server.Address(), ConnectionOptions: sdkclient.ConnectionOptions{TLS: sysTLS}})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	squat, err := sys.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: "elsewhere"}, "Squatter")
	if err != nil {
		t.Fatal(err)
	}

	req := Request{Project: "p", Workspace: engine.DefaultWorkspace, Spec: &engine.Spec{}}
	_, err = c.Apply(ctx, req)
	var s *SquatterError
	if !errors.As(err, &s) || !errors.Is(err, ErrBusy) {
		t.Fatalf("apply under a squatter: %v, want a SquatterError", err)
	}
	if s.Type != "Squatter" || s.RunID != squat.GetRunID() || !strings.Contains(err.Error(), "kumo release unlock") {
		t.Fatalf("squatter reported as %+v: %v", s, err)
	}
	if _, err := c.Unfinished(ctx, "p", engine.DefaultWorkspace); !errors.As(err, &s) {
		t.Fatalf("resume under a squatter: %v, want a SquatterError", err)
	}

	cleared, err := c.ClearSquatter(ctx, "p", engine.DefaultWorkspace)
	if err != nil || cleared == nil || cleared.RunID != squat.GetRunID() {
		t.Fatalf("clear: %+v, %v", cleared, err)
	}
	if again, err := c.ClearSquatter(ctx, "p", engine.DefaultWorkspace); err != nil || again != nil {
		t.Fatalf("second clear: %+v, %v; want nothing to clear", again, err)
	}
	run, err := c.Apply(ctx, req)
	if err != nil {
		t.Fatalf("apply after clearing: %v", err)
	}
	if res, err := run.Wait(ctx); err != nil || res.Status != runspec.StatusSucceeded {
		t.Fatalf("apply after clearing: %+v, %v", res, err)
	}
	// A kumo run holding the lock is not a squatter.
	if s, err := c.ClearSquatter(ctx, "p", engine.DefaultWorkspace); err != nil || s != nil {
		t.Fatalf("clear with no squatter: %+v, %v", s, err)
	}
}
