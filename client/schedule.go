package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// MinScheduleInterval is the shortest interval a drift schedule takes.
const MinScheduleInterval = time.Minute

// DefaultScheduleInterval is a drift schedule's interval when neither one nor
// a cron expression is given.
const DefaultScheduleInterval = 4 * time.Hour

// scheduleMemo is the memo field holding a schedule's ScheduleSettings, so
// list and describe show how it was made without decoding its action.
const scheduleMemo = "kumoDriftSchedule"

// ScheduleRequest creates or updates the drift schedule of a stack.
type ScheduleRequest struct {
	DriftRequest
	// Every is the interval between checks (at least MinScheduleInterval), or
	// Cron a cron expression; neither: DefaultScheduleInterval.
	Every time.Duration
	Cron  string
	// Jitter delays each check by a random time up to it.
	Jitter time.Duration
}

// ScheduleSettings are what a drift schedule was made with, kept in its memo.
type ScheduleSettings struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack,omitempty"`
	Every     string `json:"every,omitempty"`
	Cron      string `json:"cron,omitempty"`
	Jitter    string `json:"jitter,omitempty"`
	Mode      string `json:"mode"`
}

// DriftSchedule is a drift schedule as Temporal describes it.
type DriftSchedule struct {
	ID string `json:"id"`
	ScheduleSettings
	Paused bool `json:"paused"`
	// Note is why it was paused (by hand, or by Temporal after a failed check).
	Note string `json:"note,omitempty"`
	// Recent are the latest checks it started, oldest first; Next when the
	// next ones are due.
	Recent []ScheduledCheck `json:"recent,omitempty"`
	Next   []time.Time      `json:"next,omitempty"`
	// Running is the check in progress, if any (never more than one: overlap
	// policy skip).
	Running string `json:"running,omitempty"`
	// Skipped counts checks not started because the previous one still ran.
	Skipped int `json:"skipped,omitempty"`
	// LastReport is the stack's latest stored drift report (describe only).
	LastReport *drift.Report `json:"lastReport,omitempty"`
}

// ScheduledCheck is one check a schedule started.
type ScheduledCheck struct {
	WorkflowID string    `json:"workflowID"`
	RunID      string    `json:"runID"`
	Scheduled  time.Time `json:"scheduled"`
	Started    time.Time `json:"started"`
}

// ScheduleExistsError is returned when creating a drift schedule that exists.
type ScheduleExistsError struct{ ID string }

func (e *ScheduleExistsError) Error() string {
	return fmt.Sprintf("drift schedule %s exists: pass --update to change it, or use `kumo drift schedule update`", e.ID)
}

// scheduleClient is the schedule client of a Temporal that keeps running: a
// kumo server on the home, or the cluster at the address given. A schedule on
// a one-shot kumo's embedded server would stop with the command.
func (c *Client) scheduleClient(ctx context.Context) (sdkclient.ScheduleClient, error) {
	const why = "drift schedules need a Temporal that keeps running, and this kumo's own server stops when the command ends"
	if c.server != nil {
		return nil, fmt.Errorf("%s: start `kumo server`, or pass --temporal-address", why)
	}
	required := c.requireServer
	c.requireServer = true
	tc, err := c.dial(ctx)
	c.requireServer = required
	if errors.Is(err, ErrNoServer) {
		return nil, fmt.Errorf("%s: %w", why, err)
	}
	if err != nil {
		return nil, err
	}
	return tc.ScheduleClient(), nil
}

// CreateDriftSchedule creates the drift schedule of a stack (ID
// kumo-drift/<project>/<workspace>): a DriftCheck at every interval or cron
// time, never two at once (overlap skip), a missed check caught up within one
// interval, and paused by Temporal after a check that fails. It fails with a
// ScheduleExistsError if the stack has one.
func (c *Client) CreateDriftSchedule(ctx context.Context, req ScheduleRequest) (*DriftSchedule, error) {
	sc, s, in, err := c.prepareSchedule(ctx, req)
	if err != nil {
		return nil, err
	}
	id := runspec.DriftScheduleID(req.Project, req.Workspace)
	opts := sdkclient.ScheduleOptions{
		ID:                    id,
		Spec:                  scheduleSpec(id, req),
		Action:                c.scheduleAction(in, s),
		Overlap:               enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow:         catchupWindow(req),
		PauseOnFailure:        true,
		Memo:                  map[string]any{scheduleMemo: s},
		TypedSearchAttributes: runAttributes(req.Project, req.Workspace, in.Stack, driftOperation),
	}
	h, err := sc.Create(ctx, opts)
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil, &ScheduleExistsError{ID: id}
	}
	if err != nil {
		return nil, fmt.Errorf("create drift schedule %s: %w", id, err)
	}
	return c.describe(ctx, h, false)
}

// UpdateDriftSchedule replaces the timing, mode, runtime settings and drift
// rules of a stack's schedule with req's, read anew (a schedule carries the
// settings and rules it was made or last updated with). Paused stays as it was.
func (c *Client) UpdateDriftSchedule(ctx context.Context, req ScheduleRequest) (*DriftSchedule, error) {
	sc, s, in, err := c.prepareSchedule(ctx, req)
	if err != nil {
		return nil, err
	}
	id := runspec.DriftScheduleID(req.Project, req.Workspace)
	h := sc.GetHandle(ctx, id)
	err = h.Update(ctx, sdkclient.ScheduleUpdateOptions{DoUpdate: func(u sdkclient.ScheduleUpdateInput) (*sdkclient.ScheduleUpdate, error) {
		sched := u.Description.Schedule
		spec := scheduleSpec(id, req)
		sched.Spec, sched.Action = &spec, c.scheduleAction(in, s)
		if sched.Policy != nil {
			sched.Policy.CatchupWindow = catchupWindow(req)
		}
		return &sdkclient.ScheduleUpdate{Schedule: &sched}, nil
	}})
	if err != nil {
		return nil, scheduleError("update", h.GetID(), err)
	}
	return c.describe(ctx, h, false)
}

// prepareSchedule checks req and reads what its schedule carries: the timing
// and mode for the memo, and the check's input (settings, rules, stack).
func (c *Client) prepareSchedule(ctx context.Context, req ScheduleRequest) (sdkclient.ScheduleClient, ScheduleSettings, runspec.DriftInput, error) {
	s, err := scheduleSettings(req)
	if err != nil {
		return nil, s, runspec.DriftInput{}, err
	}
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return nil, s, runspec.DriftInput{}, err
	}
	in, err := c.driftInput(ctx, req.DriftRequest)
	s.Stack = in.Stack
	return sc, s, in, err
}

// DriftScheduleAction is a change ChangeDriftSchedule makes.
type DriftScheduleAction string

const (
	SchedulePause   DriftScheduleAction = "pause"
	ScheduleUnpause DriftScheduleAction = "unpause"
	ScheduleTrigger DriftScheduleAction = "trigger"
	ScheduleDelete  DriftScheduleAction = "delete"
)

// ChangeDriftSchedule pauses (with note), unpauses, triggers (a check now,
// unless one is running) or deletes the drift schedule of a stack.
func (c *Client) ChangeDriftSchedule(ctx context.Context, project, workspace string, action DriftScheduleAction, note string) error {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return err
	}
	h := sc.GetHandle(ctx, runspec.DriftScheduleID(project, workspace))
	switch action {
	case SchedulePause:
		if note == "" {
			note = "paused with kumo drift schedule pause by " + startedBy()
		}
		err = h.Pause(ctx, sdkclient.SchedulePauseOptions{Note: note})
	case ScheduleUnpause:
		if note == "" {
			note = "unpaused with kumo drift schedule unpause by " + startedBy()
		}
		err = h.Unpause(ctx, sdkclient.ScheduleUnpauseOptions{Note: note})
	case ScheduleTrigger:
		err = h.Trigger(ctx, sdkclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
	case ScheduleDelete:
		err = h.Delete(ctx)
	default:
		return fmt.Errorf("unknown schedule action %q", action)
	}
	return scheduleError(string(action), h.GetID(), err)
}

// triggerWait bounds how long TriggerDriftCheck waits for the schedule to start
// the check.
const triggerWait = 30 * time.Second

// TriggerDriftCheck triggers the schedule of a stack and returns the check it
// started, waiting (up to ctx) for the schedule to start it. A check already
// running is returned instead: checks never overlap.
func (c *Client) TriggerDriftCheck(ctx context.Context, project, workspace string) (*Run, error) {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	h := sc.GetHandle(ctx, runspec.DriftScheduleID(project, workspace))
	before, err := h.Describe(ctx)
	if err != nil {
		return nil, scheduleError("trigger", h.GetID(), err)
	}
	if err := h.Trigger(ctx, sdkclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP}); err != nil {
		return nil, scheduleError("trigger", h.GetID(), err)
	}
	deadline := time.Now().Add(triggerWait)
	for {
		d, err := h.Describe(ctx)
		if err != nil {
			return nil, scheduleError("trigger", h.GetID(), err)
		}
		if d.Info.NumActions > before.Info.NumActions && len(d.Info.RecentActions) > 0 {
			r := d.Info.RecentActions[len(d.Info.RecentActions)-1].StartWorkflowResult
			return &Run{c: c, Operation: driftOperation, WorkflowID: r.WorkflowID, RunID: r.FirstExecutionRunID}, nil
		}
		if len(before.Info.RunningWorkflows) > 0 {
			r := before.Info.RunningWorkflows[0]
			return &Run{c: c, Operation: driftOperation, WorkflowID: r.WorkflowID, RunID: r.FirstExecutionRunID}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("trigger %s: no check started within %s (is a check running? kumo run list --operation drift)", h.GetID(), triggerWait)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("trigger %s: no check started: %w", h.GetID(), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitDriftCheck waits for a check run and returns the report it stored.
func (c *Client) WaitDriftCheck(ctx context.Context, run *Run, project, workspace string) (*drift.Report, error) {
	var res runspec.DriftResult
	if err := run.wait(ctx, &res); err != nil {
		return nil, fmt.Errorf("drift check %s: %w", run.WorkflowID, err)
	}
	return c.backend.DriftReport(ctx, project, workspace, res.RunID)
}

// DescribeDriftSchedule describes the drift schedule of a stack, with its
// latest report.
func (c *Client) DescribeDriftSchedule(ctx context.Context, project, workspace string) (*DriftSchedule, error) {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	return c.describe(ctx, sc.GetHandle(ctx, runspec.DriftScheduleID(project, workspace)), true)
}

// ListDriftSchedules lists the drift schedules in the namespace (of project,
// when not empty), by ID.
func (c *Client) ListDriftSchedules(ctx context.Context, project string) ([]*DriftSchedule, error) {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	return listSchedules(ctx, sc, "drift", runspec.DriftSchedulePrefix,
		func(e *sdkclient.ScheduleListEntry) bool {
			// The entry's memo holds what create wrote; describe reads what
			// the last update wrote.
			return project == "" || memoSettings(c.DataConverter(), e.Memo).Project == project
		},
		func(h sdkclient.ScheduleHandle) (*DriftSchedule, error) { return c.describe(ctx, h, false) })
}

// listSchedules describes, in the order of their IDs, the schedules whose ID
// starts with prefix and that keep (nil: all) takes; what names them in errors.
func listSchedules[T any](ctx context.Context, sc sdkclient.ScheduleClient, what, prefix string,
	keep func(*sdkclient.ScheduleListEntry) bool, describe func(sdkclient.ScheduleHandle) (T, error),
) ([]T, error) {
	it, err := sc.List(ctx, sdkclient.ScheduleListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s schedules: %w", what, err)
	}
	var ids []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list %s schedules: %w", what, err)
		}
		if strings.HasPrefix(e.ID, prefix) && (keep == nil || keep(e)) {
			ids = append(ids, e.ID)
		}
	}
	slices.Sort(ids)
	var out []T
	for _, id := range ids {
		s, err := describe(sc.GetHandle(ctx, id))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (c *Client) describe(ctx context.Context, h sdkclient.ScheduleHandle, withReport bool) (*DriftSchedule, error) {
	d, err := h.Describe(ctx)
	if err != nil {
		return nil, scheduleError("describe", h.GetID(), err)
	}
	s := &DriftSchedule{ID: h.GetID(), Recent: recentChecks(d.Info.RecentActions), Next: d.Info.NextActionTimes, Skipped: d.Info.NumActionsSkippedOverlap}
	s.ScheduleSettings = memoSettings(c.DataConverter(), d.Memo)
	// The action's memo is replaced by every update; the schedule's keeps create's.
	if a, ok := d.Schedule.Action.(*sdkclient.ScheduleWorkflowAction); ok {
		if p, ok := a.Memo[scheduleMemo].(*commonpb.Payload); ok {
			_ = c.DataConverter().FromPayload(p, &s.ScheduleSettings)
		}
	}
	if st := d.Schedule.State; st != nil {
		s.Paused, s.Note = st.Paused, st.Note
	}
	if len(d.Info.RunningWorkflows) > 0 {
		s.Running = d.Info.RunningWorkflows[0].WorkflowID
	}
	if withReport && s.Project != "" {
		if r, err := c.backend.DriftReport(ctx, s.Project, s.Workspace, ""); err == nil {
			s.LastReport = r
		}
	}
	return s, nil
}

func (c *Client) scheduleAction(in runspec.DriftInput, s ScheduleSettings) *sdkclient.ScheduleWorkflowAction {
	req := Request{Project: in.Project, Workspace: in.Workspace, Stack: in.Stack}
	return &sdkclient.ScheduleWorkflowAction{
		// Temporal appends the time of each check to this ID.
		ID:            runspec.DriftScheduleID(in.Project, in.Workspace) + "/scheduled",
		Workflow:      runspec.DriftWorkflow,
		Args:          []any{in},
		TaskQueue:     runspec.TaskQueue,
		StaticSummary: fmt.Sprintf("drift %s/%s (scheduled, %s)", in.Project, in.Workspace, s.Mode),
		StaticDetails: staticDetails(driftOperation, req, in, "") + fmt.Sprintf("- schedule: `%s`, mode %s\n", runspec.DriftScheduleID(in.Project, in.Workspace), s.Mode),
		Memo:          map[string]any{scheduleMemo: s},
		TypedSearchAttributes: runAttributes(in.Project, in.Workspace, in.Stack, driftOperation,
			workflows.StatusAttr.ValueSet(string(runspec.StatusRunning))),
	}
}

const driftOperation = "drift"

// scheduleSettings checks a request's timing and mode and returns them as the
// memo records them.
func scheduleSettings(req ScheduleRequest) (ScheduleSettings, error) {
	s := ScheduleSettings{Project: req.Project, Workspace: req.Workspace, Cron: req.Cron, Mode: modeOrWarn(req.Mode)}
	switch {
	case req.Every != 0 && req.Cron != "":
		return s, errors.New("give --every or --cron, not both")
	case req.Every < 0 || req.Every > 0 && req.Every < MinScheduleInterval:
		return s, fmt.Errorf("--every %s: the shortest interval is %s", req.Every, MinScheduleInterval)
	case req.Every > 0:
		s.Every = req.Every.String()
	case req.Cron == "":
		s.Every = DefaultScheduleInterval.String()
	}
	if req.Jitter < 0 {
		return s, fmt.Errorf("--jitter %s is negative", req.Jitter)
	}
	if req.Jitter > 0 {
		s.Jitter = req.Jitter.String()
	}
	if err := drift.ValidMode(s.Mode); err != nil {
		return s, fmt.Errorf("--mode: %w", err)
	}
	return s, nil
}

func modeOrWarn(mode string) string {
	if mode == "" {
		return drift.ModeWarn
	}
	return mode
}

// An interval schedule fires at its own phase of the interval
// (runspec.SchedulePhase), so a platform's checks do not all start at once; a
// cron expression fires when it says.
func scheduleSpec(id string, req ScheduleRequest) sdkclient.ScheduleSpec {
	spec := sdkclient.ScheduleSpec{Jitter: req.Jitter}
	if req.Cron != "" {
		spec.CronExpressions = []string{req.Cron}
		return spec
	}
	every := req.Every
	if every <= 0 {
		every = DefaultScheduleInterval
	}
	spec.Intervals = []sdkclient.ScheduleIntervalSpec{{Every: every, Offset: runspec.SchedulePhase(id, every)}}
	return spec
}

// catchupWindow is how late a missed check still runs after Temporal was
// down: one interval (an hour for cron schedules), so a long outage costs one
// check, not one per missed time (and overlap skip keeps even that to one).
func catchupWindow(req ScheduleRequest) time.Duration {
	switch {
	case req.Every > 0:
		return req.Every
	case req.Cron != "":
		return time.Hour
	}
	return DefaultScheduleInterval
}

// memoSettings reads the settings a schedule was created with from its memo,
// through the client's data converter: with the codec on, memos are encrypted.
func memoSettings(dc converter.DataConverter, m *commonpb.Memo) ScheduleSettings {
	var s ScheduleSettings
	if m == nil {
		return s
	}
	if p, ok := m.Fields[scheduleMemo]; ok {
		_ = dc.FromPayload(p, &s)
	}
	return s
}

func recentChecks(actions []sdkclient.ScheduleActionResult) []ScheduledCheck {
	var out []ScheduledCheck
	for _, a := range actions {
		if a.StartWorkflowResult == nil {
			continue
		}
		out = append(out, ScheduledCheck{
			WorkflowID: a.StartWorkflowResult.WorkflowID, RunID: a.StartWorkflowResult.FirstExecutionRunID,
			Scheduled: a.ScheduleTime, Started: a.ActualTime,
		})
	}
	return out
}

// scheduleError names the schedule, and says plainly when it does not exist.
func scheduleError(action, id string, err error) error {
	if err == nil {
		return nil
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%s: no drift schedule %s (create it with `kumo drift schedule create`)", action, id)
	}
	return fmt.Errorf("%s drift schedule %s: %w", action, id, err)
}
