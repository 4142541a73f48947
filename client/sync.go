package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine/gitsource"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// MinSyncInterval is the shortest interval a sync schedule takes: a tick
// that finds nothing new costs one ls-remote.
const MinSyncInterval = time.Second

// DefaultSyncInterval is a sync schedule's interval when none is given.
const DefaultSyncInterval = 5 * time.Minute

// SyncScheduleRequest creates the sync schedule of a stack from a source.
type SyncScheduleRequest struct {
	Source    string
	Workspace string
	Every     time.Duration
	// Mode is gitsource.ModeApply (default) or gitsource.ModePreview.
	Mode             string
	ApprovalRequired bool
	Parallelism      int
	Settings         runspec.RuntimeSettings
}

// SyncSchedule is a sync schedule as Temporal describes it.
type SyncSchedule struct {
	ID    string `json:"id"`
	Every string `json:"every"`
	runspec.SyncInput
	Paused bool        `json:"paused"`
	Next   []time.Time `json:"next,omitempty"`
	// Running is the tick in progress, if any.
	Running string `json:"running,omitempty"`
	// State is what the stack's sync last did (the backend's record).
	State *gitsource.SyncState `json:"state,omitempty"`
}

// CreateSyncSchedule creates the sync schedule of req's source in req's
// workspace (ID kumo-sync/<project>/<workspace>): a SourceSync tick at every
// interval, never two at once (one more buffered: a webhook's trigger during
// a tick runs after it).
func (c *Client) CreateSyncSchedule(ctx context.Context, req SyncScheduleRequest) (*SyncSchedule, error) {
	src, err := c.Source(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	if req.Mode == "" {
		req.Mode = gitsource.ModeApply
	}
	if req.Mode != gitsource.ModeApply && req.Mode != gitsource.ModePreview {
		return nil, fmt.Errorf("--mode %q: want %s or %s", req.Mode, gitsource.ModePreview, gitsource.ModeApply)
	}
	if req.Every == 0 {
		req.Every = DefaultSyncInterval
	}
	if req.Every < MinSyncInterval {
		return nil, fmt.Errorf("--every %s: the shortest interval is %s", req.Every, MinSyncInterval)
	}
	if req.Workspace == "" {
		return nil, errors.New("want the workspace a sync schedule deploys to: --workspace NAME")
	}
	sc, err := c.syncScheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	in := runspec.SyncInput{Project: src.Project, Workspace: req.Workspace, Source: src.Name, Mode: req.Mode,
		ApprovalRequired: req.ApprovalRequired, Parallelism: req.Parallelism, Settings: req.Settings}
	id := runspec.SyncScheduleID(src.Project, req.Workspace)
	operation := "sync"
	h, err := sc.Create(ctx, sdkclient.ScheduleOptions{
		ID: id,
		// At its own phase of the interval, as drift schedules are.
		Spec:    sdkclient.ScheduleSpec{Intervals: []sdkclient.ScheduleIntervalSpec{{Every: req.Every, Offset: runspec.SchedulePhase(id, req.Every)}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
		// A tick missed while Temporal was down is one ls-remote late, not lost.
		CatchupWindow: max(req.Every, time.Minute),
		Memo:          map[string]any{syncMemo: req.Every.String()},
		Action: &sdkclient.ScheduleWorkflowAction{
			ID:            id + "/tick",
			Workflow:      runspec.SyncWorkflow,
			Args:          []any{in},
			TaskQueue:     runspec.TaskQueue,
			StaticSummary: fmt.Sprintf("sync %s/%s from %s@%s (%s)", src.Project, req.Workspace, src.Name, src.Ref, req.Mode),
			StaticDetails: fmt.Sprintf("**kumo sync** of project `%s`, workspace `%s`, stack `%s`\n\n- source: `%s`: %s@%s, path `%s`\n- mode: %s\n- schedule: `%s`, every %s\n",
				src.Project, req.Workspace, src.Stack, src.Name, src.URL, src.Ref, src.Path, req.Mode, id, req.Every),
			TypedSearchAttributes: runAttributes(src.Project, req.Workspace, src.Stack, operation,
				workflows.StatusAttr.ValueSet(string(runspec.StatusRunning))),
		},
		TypedSearchAttributes: runAttributes(src.Project, req.Workspace, src.Stack, operation),
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil, fmt.Errorf("sync schedule %s exists: delete it first (kumo sync schedule delete --source %s --workspace %s)", id, src.Name, req.Workspace)
	}
	if err != nil {
		return nil, fmt.Errorf("create sync schedule %s: %w", id, err)
	}
	return c.describeSync(ctx, h)
}

// syncMemo is the memo field holding a sync schedule's interval.
const syncMemo = "kumoSyncEvery"

func (c *Client) syncScheduleClient(ctx context.Context) (sdkclient.ScheduleClient, error) {
	sc, err := c.scheduleClient(ctx)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "drift schedules", "sync schedules", 1))
	}
	return sc, nil
}

func (c *Client) describeSync(ctx context.Context, h sdkclient.ScheduleHandle) (*SyncSchedule, error) {
	d, err := h.Describe(ctx)
	if err != nil {
		return nil, scheduleError("describe", h.GetID(), err)
	}
	s := &SyncSchedule{ID: h.GetID(), Next: d.Info.NextActionTimes}
	if a, ok := d.Schedule.Action.(*sdkclient.ScheduleWorkflowAction); ok && len(a.Args) == 1 {
		if p, ok := a.Args[0].(*commonpb.Payload); ok {
			_ = c.DataConverter().FromPayload(p, &s.SyncInput)
		}
	}
	if sp := d.Schedule.Spec; sp != nil && len(sp.Intervals) > 0 {
		s.Every = sp.Intervals[0].Every.String()
	}
	if st := d.Schedule.State; st != nil {
		s.Paused = st.Paused
	}
	if len(d.Info.RunningWorkflows) > 0 {
		s.Running = d.Info.RunningWorkflows[0].WorkflowID
	}
	if s.Project != "" && s.Workspace != "" {
		if st, err := c.backend.GetSyncState(ctx, s.Project, s.Workspace); err == nil {
			s.State = st
		}
	}
	return s, nil
}

// DescribeSyncSchedule describes the sync schedule of a stack.
func (c *Client) DescribeSyncSchedule(ctx context.Context, project, workspace string) (*SyncSchedule, error) {
	sc, err := c.syncScheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	return c.describeSync(ctx, sc.GetHandle(ctx, runspec.SyncScheduleID(project, workspace)))
}

// DeleteSyncSchedule deletes the sync schedule of a stack (a run it started
// goes on).
func (c *Client) DeleteSyncSchedule(ctx context.Context, project, workspace string) error {
	sc, err := c.syncScheduleClient(ctx)
	if err != nil {
		return err
	}
	h := sc.GetHandle(ctx, runspec.SyncScheduleID(project, workspace))
	return scheduleError("delete", h.GetID(), h.Delete(ctx))
}

// TriggerSync makes the sync schedule of a stack tick now (after the tick in
// progress, if one is: overlap buffer-one).
func (c *Client) TriggerSync(ctx context.Context, project, workspace string) error {
	sc, err := c.syncScheduleClient(ctx)
	if err != nil {
		return err
	}
	h := sc.GetHandle(ctx, runspec.SyncScheduleID(project, workspace))
	return scheduleError("trigger", h.GetID(), h.Trigger(ctx, sdkclient.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE}))
}

// SyncSchedules lists the sync schedules in the namespace, by ID.
func (c *Client) SyncSchedules(ctx context.Context) ([]*SyncSchedule, error) {
	sc, err := c.syncScheduleClient(ctx)
	if err != nil {
		return nil, err
	}
	return listSchedules(ctx, sc, "sync", runspec.SyncSchedulePrefix, nil,
		func(h sdkclient.ScheduleHandle) (*SyncSchedule, error) { return c.describeSync(ctx, h) })
}

// TriggerSourceSyncs makes every sync schedule of a source tick now (the git
// webhook) and returns their IDs.
func (c *Client) TriggerSourceSyncs(ctx context.Context, source string) ([]string, error) {
	all, err := c.SyncSchedules(ctx)
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, s := range all {
		if s.Source != source {
			continue
		}
		if err := c.TriggerSync(ctx, s.Project, s.Workspace); err != nil {
			return ids, err
		}
		ids = append(ids, s.ID)
	}
	return ids, nil
}
