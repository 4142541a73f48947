package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/runspec"
)

// DefaultGCInterval is how often a kumo server collects its records; the
// shortest is MinGCInterval.
const (
	DefaultGCInterval = time.Hour
	MinGCInterval     = time.Minute
)

// GCPolicy says what kumo keeps of its own records (backend.GCPolicy);
// GCReport is what a collection did.
type (
	GCPolicy = backend.GCPolicy
	GCReport = backend.GCReport
)

// ValidateReleaseRetention refuses a release history limit that is negative
// or 1 (backend.ValidateReleaseRetention).
func ValidateReleaseRetention(n int) error { return backend.ValidateReleaseRetention(n) }

// DefaultGCPolicy is the policy of a kumo server started without --retain-*.
func DefaultGCPolicy() GCPolicy { return backend.DefaultGCPolicy() }

// GCInputOf is the input of collections under policy p.
func GCInputOf(p backend.GCPolicy, dryRun bool) runspec.GCInput {
	return runspec.GCInput{RunLogs: p.RunLogs, DriftReports: p.DriftReports, Requests: p.Requests, Audit: p.Audit, Grace: p.Grace, Releases: p.Releases, DryRun: dryRun}
}

// CollectBackend collects the records of the backend opts name under policy
// p, as of now (time.Now() but in tests), in this process (`kumo backend
// gc`). The backend is opened as `kumo backend migrate` opens it, without
// codec keys (nothing is decoded); Temporal (the kumo server this home is
// attached to, or the embedded one) is asked which specs the runs waiting in
// run queues need, and a collection that cannot ask removes nothing.
func CollectBackend(ctx context.Context, opts Options, p backend.GCPolicy, now time.Time, dryRun bool) (backend.GCReport, error) {
	if err := p.Validate(); err != nil {
		return backend.GCReport{}, fmt.Errorf("backend gc: %w", err)
	}
	s, err := recordStore(ctx, opts)
	if err != nil {
		return backend.GCReport{}, fmt.Errorf("backend gc: %w", err)
	}
	c, err := OpenContext(ctx, opts)
	if err != nil {
		return backend.GCReport{}, fmt.Errorf("backend gc: %w", err)
	}
	defer c.Close()
	queued, err := lazyRunChecker{c}.QueuedSpecs(ctx)
	if err != nil {
		return backend.GCReport{}, fmt.Errorf("backend gc: the specs of queued runs, which it must keep: %w", err)
	}
	rep, err := backend.Collect(ctx, s, p, now, dryRun, queued...)
	if err != nil {
		return rep, fmt.Errorf("backend gc: %w", err)
	}
	return rep, nil
}

// EnsureGCSchedule creates, or updates to p and every, the schedule that
// collects kumo's records (runspec.GCScheduleID): a BackendGC every
// interval, never two at once, a missed one not caught up (the next one does
// its work). It runs on the kumo server or cluster c is attached to.
func (c *Client) EnsureGCSchedule(ctx context.Context, p backend.GCPolicy, every time.Duration) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("gc schedule: %w", err)
	}
	if every < MinGCInterval {
		return fmt.Errorf("gc schedule: interval %s: the shortest is %s", every, MinGCInterval)
	}
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return err
	}
	in := GCInputOf(p, false)
	spec := sdkclient.ScheduleSpec{Intervals: []sdkclient.ScheduleIntervalSpec{{Every: every}}}
	action := &sdkclient.ScheduleWorkflowAction{
		ID: runspec.GCWorkflowID, Workflow: runspec.GCWorkflow, Args: []any{in}, TaskQueue: runspec.TaskQueue,
		StaticSummary: fmt.Sprintf("collect kumo's records (run logs %s, drift reports %s, idempotency keys %s, grace %s, %s)", p.RunLogs, p.DriftReports, p.Requests, p.Grace, ReleasesKept(p)),
		StaticDetails: gcDetails(p, every),
	}
	_, err = sc.Create(ctx, sdkclient.ScheduleOptions{
		ID: runspec.GCScheduleID, Spec: spec, Action: action,
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: MinGCInterval,
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		if err != nil {
			return fmt.Errorf("create gc schedule %s: %w", runspec.GCScheduleID, err)
		}
		return nil
	}
	h := sc.GetHandle(ctx, runspec.GCScheduleID)
	err = h.Update(ctx, sdkclient.ScheduleUpdateOptions{DoUpdate: func(u sdkclient.ScheduleUpdateInput) (*sdkclient.ScheduleUpdate, error) {
		s := u.Description.Schedule
		s.Spec, s.Action = &spec, action
		s.Policy = &sdkclient.SchedulePolicies{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: MinGCInterval}
		return &sdkclient.ScheduleUpdate{Schedule: &s}, nil
	}})
	if err != nil {
		return fmt.Errorf("update gc schedule %s: %w", runspec.GCScheduleID, err)
	}
	return nil
}

func gcDetails(p backend.GCPolicy, every time.Duration) string {
	audit := "kept forever"
	if p.Audit > 0 {
		audit = "kept " + p.Audit.String()
	}
	return fmt.Sprintf("**kumo gc**, every %s.\n\n- releases: %s\n- run logs: kept %s\n- drift reports: kept %s (each stack's newest always)\n"+
		"- idempotency keys: kept %s\n- audit log: %s\n- specs and state chunks no release names: removed once unreferenced for %s\n",
		every, ReleasesKept(p), p.RunLogs, p.DriftReports, p.Requests, audit, p.Grace)
}

// ReleasesKept says what the release history limit of p keeps.
func ReleasesKept(p backend.GCPolicy) string {
	if p.Releases == 0 {
		return "every revision kept"
	}
	return fmt.Sprintf("the newest %d revisions of each project/workspace kept (and its newest succeeded one)", p.Releases)
}

// DeleteGCSchedule removes the schedule that collects kumo's records, if
// there is one (`kumo server --gc-every 0`).
func (c *Client) DeleteGCSchedule(ctx context.Context) error {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return err
	}
	err = sc.GetHandle(ctx, runspec.GCScheduleID).Delete(ctx)
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("delete gc schedule %s: %w", runspec.GCScheduleID, err)
	}
	return nil
}
