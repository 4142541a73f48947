package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

// ErrTypeStatusTooLarge: a stack's status is too big for a workflow result.
const ErrTypeStatusTooLarge = "StatusTooLarge"

// ReadStatus reads the live status of a stack with this worker's runtimes
// (release.Manager.Status), heartbeating while it reads: it runs on the
// workspace's task queue, inside the cluster's network.
func (a *Activities) ReadStatus(ctx context.Context, in runspec.StatusInput) (runspec.StackStatus, error) {
	defer heartbeat(ctx)()
	st, err := a.m.Status(ctx, in.Project, in.Workspace, in.Settings, in.Depth)
	if errors.Is(err, backend.ErrNotFound) {
		err = &release.Error{Kind: release.ErrNoRelease, Err: fmt.Errorf("no status: %s/%s has no releases", in.Project, in.Workspace)}
	}
	if err != nil {
		return runspec.StackStatus{}, temporalError(err)
	}
	return st, statusFits(st, in.Depth)
}

// statusFits fails, naming the stack and the size, when st would not fit in
// a workflow result; it never cuts the status short.
func statusFits(st runspec.StackStatus, depth int) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if len(b) <= runspec.MaxStatusBytes {
		return nil
	}
	hint := "read it from a machine that reaches the cluster, with a workspace without temporal.taskQueue"
	if depth > 0 {
		hint = "read it without --tree"
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("status of %s/%s is %d bytes, more than the %d a workflow result may carry; %s", st.Project, st.Workspace, len(b), runspec.MaxStatusBytes, hint),
		ErrTypeStatusTooLarge, nil)
}
