package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kumoproj/kumo/internal/temporaltest"
	"github.com/kumoproj/kumo/runspec"
)

// stallAfter is how long a chaos trial's apply may go on after its fault
// before the trial counts it as stalled: an apply of a few hundred
// ConfigMaps ends within seconds of a fault the fleet recovers from.
const stallAfter = 3 * time.Minute

// logMarks are the lengths of the fleet's log files when a fault struck, so a
// diagnosis shows only what was logged since.
type logMarks map[string]int64

// logFiles are the fleet's logs: each Temporal service's and each kumo worker's.
func (f *productionFleet) logFiles() []string {
	var files []string
	for _, s := range temporaltest.Services {
		files = append(files, f.temporal.LogFile(s))
	}
	for i := range f.workers {
		files = append(files, filepath.Join(f.logs, fmt.Sprintf("worker-%d.log", i+1)))
	}
	return files
}

func (f *productionFleet) markLogs() logMarks {
	m := logMarks{}
	for _, p := range f.logFiles() {
		m[p] = fileLen(p)
	}
	return m
}

// dial is an SDK client of the fleet's namespace, as the test's own
// certificate; the caller closes it.
func (f *productionFleet) dial(ctx context.Context) (sdkclient.Client, error) {
	cfg, err := f.temporal.TLSConfig()
	if err != nil {
		return nil, err
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return sdkclient.DialContext(ctx, sdkclient.Options{
		HostPort: f.temporal.Address, Namespace: productionNamespace,
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: cfg}, Logger: quiet,
	})
}

// diagnoseStall says what an apply of e's that stopped making progress is
// waiting for, as an operator would find out with temporal workflow
// describe: the run's status, its pending workflow task and activities
// (attempt, last start and heartbeat, timeouts), the last events of its
// history, the pollers of kumo's task queue, and what the services and
// workers logged since the fault (marks). It then terminates the run so the
// next trial starts on a quiet fleet.
func (f *productionFleet) diagnoseStall(e *env, marks logMarks) string {
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tc, err := f.dial(ctx)
	if err != nil {
		fmt.Fprintf(&b, "dial Temporal: %v\n", err)
	} else {
		defer tc.Close()
		id := runspec.MutatingWorkflowID(e.project, "default")
		describeRun(ctx, &b, tc, id)
		if err := tc.TerminateWorkflow(ctx, id, "", "the production chaos trial found it stalled"); err != nil {
			fmt.Fprintf(&b, "terminate %s: %v\n", id, err)
		}
	}
	for _, p := range f.logFiles() {
		lines := linesSince(p, marks[p], 25)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s since the fault:\n    %s\n", filepath.Base(p), strings.Join(lines, "\n    "))
	}
	return b.String()
}

func describeRun(ctx context.Context, b *strings.Builder, tc sdkclient.Client, id string) {
	now := time.Now()
	ago := func(ts *timestamppb.Timestamp) string {
		if ts == nil || ts.AsTime().IsZero() {
			return "never"
		}
		return now.Sub(ts.AsTime()).Round(time.Millisecond).String() + " ago"
	}
	d, err := tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		fmt.Fprintf(b, "describe %s: %v\n", id, err)
		return
	}
	info := d.GetWorkflowExecutionInfo()
	fmt.Fprintf(b, "run %s (%s): %s, started %s, %d events\n", id, info.GetExecution().GetRunId(), info.GetStatus(), ago(info.GetStartTime()), info.GetHistoryLength())
	if wt := d.GetPendingWorkflowTask(); wt != nil {
		fmt.Fprintf(b, "  pending workflow task: %s, attempt %d, scheduled %s, started %s\n", wt.GetState(), wt.GetAttempt(), ago(wt.GetScheduledTime()), ago(wt.GetStartedTime()))
	}
	// Each pending activity's timeouts are in its scheduled event.
	events := map[string]*historypb.ActivityTaskScheduledEventAttributes{}
	var all []*historypb.HistoryEvent
	it := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			fmt.Fprintf(b, "  history: %v\n", err)
			break
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			events[a.GetActivityId()] = a
		}
		all = append(all, ev)
	}
	for _, a := range d.GetPendingActivities() {
		fmt.Fprintf(b, "  pending activity %s %s: %s, attempt %d of %d, scheduled %s, last started %s, last heartbeat %s, worker %q",
			a.GetActivityId(), a.GetActivityType().GetName(), a.GetState(), a.GetAttempt(), a.GetMaximumAttempts(),
			ago(a.GetScheduledTime()), ago(a.GetLastStartedTime()), ago(a.GetLastHeartbeatTime()), a.GetLastWorkerIdentity())
		if s := events[a.GetActivityId()]; s != nil {
			fmt.Fprintf(b, ", start-to-close %s, heartbeat %s", s.GetStartToCloseTimeout().AsDuration(), s.GetHeartbeatTimeout().AsDuration())
		}
		if f := a.GetLastFailure(); f != nil {
			fmt.Fprintf(b, ", last failure %q", f.GetMessage())
		}
		b.WriteString("\n")
	}
	if len(all) > 15 {
		all = all[len(all)-15:]
	}
	for _, ev := range all {
		fmt.Fprintf(b, "  event %d %s %s%s\n", ev.GetEventId(), ev.GetEventTime().AsTime().Format("15:04:05.000"), ev.GetEventType(), eventDetail(ev))
	}
	for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		q, err := tc.DescribeTaskQueue(ctx, runspec.TaskQueue, kind)
		if err != nil {
			fmt.Fprintf(b, "  task queue %s (%s): %v\n", runspec.TaskQueue, kind, err)
			continue
		}
		fmt.Fprintf(b, "  task queue %s (%s): %s\n", runspec.TaskQueue, kind, pollers(q, ago))
	}
}

func pollers(q *workflowservice.DescribeTaskQueueResponse, ago func(*timestamppb.Timestamp) string) string {
	var out []string
	for _, p := range q.GetPollers() {
		out = append(out, fmt.Sprintf("%s polled %s", p.GetIdentity(), ago(p.GetLastAccessTime())))
	}
	if len(out) == 0 {
		return "no pollers"
	}
	return strings.Join(out, "; ")
}

// eventDetail is what matters of a history event for a stall: which
// activity, which attempt, which failure.
func eventDetail(ev *historypb.HistoryEvent) string {
	switch {
	case ev.GetActivityTaskScheduledEventAttributes() != nil:
		a := ev.GetActivityTaskScheduledEventAttributes()
		return fmt.Sprintf(" %s id %s (start-to-close %s, heartbeat %s)", a.GetActivityType().GetName(), a.GetActivityId(), a.GetStartToCloseTimeout().AsDuration(), a.GetHeartbeatTimeout().AsDuration())
	case ev.GetActivityTaskStartedEventAttributes() != nil:
		a := ev.GetActivityTaskStartedEventAttributes()
		return fmt.Sprintf(" scheduled %d attempt %d by %q", a.GetScheduledEventId(), a.GetAttempt(), a.GetIdentity())
	case ev.GetActivityTaskTimedOutEventAttributes() != nil:
		a := ev.GetActivityTaskTimedOutEventAttributes()
		return fmt.Sprintf(" scheduled %d: %s", a.GetScheduledEventId(), a.GetFailure().GetMessage())
	case ev.GetActivityTaskFailedEventAttributes() != nil:
		a := ev.GetActivityTaskFailedEventAttributes()
		return fmt.Sprintf(" scheduled %d: %s", a.GetScheduledEventId(), a.GetFailure().GetMessage())
	case ev.GetWorkflowTaskStartedEventAttributes() != nil:
		return fmt.Sprintf(" by %q", ev.GetWorkflowTaskStartedEventAttributes().GetIdentity())
	case ev.GetWorkflowTaskFailedEventAttributes() != nil:
		a := ev.GetWorkflowTaskFailedEventAttributes()
		return fmt.Sprintf(" %s: %s", a.GetCause(), a.GetFailure().GetMessage())
	case ev.GetWorkflowTaskTimedOutEventAttributes() != nil:
		return " " + ev.GetWorkflowTaskTimedOutEventAttributes().GetTimeoutType().String()
	case ev.GetMarkerRecordedEventAttributes() != nil:
		return " " + ev.GetMarkerRecordedEventAttributes().GetMarkerName()
	}
	return ""
}

// linesSince is the last max lines of file p written after offset.
func linesSince(p string, offset int64, max int) []string {
	fh, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer fh.Close()
	if _, err := fh.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > max {
			lines = lines[1:]
		}
	}
	return lines
}

// keepLogs copies the fleet's logs into $KUMO_PRODUCTION_ARTIFACTS/trial-<i>
// when that is set: the test's own directories go when it ends.
func (f *productionFleet) keepLogs(trial int) {
	dir := os.Getenv("KUMO_PRODUCTION_ARTIFACTS")
	if dir == "" {
		return
	}
	dst := filepath.Join(dir, fmt.Sprintf("trial-%d", trial))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		f.t.Errorf("keep logs: %v", err)
		return
	}
	for _, p := range f.logFiles() {
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, filepath.Base(p)), b, 0o644)
		}
		if err != nil {
			f.t.Errorf("keep logs: %v", err)
		}
	}
	f.t.Logf("the fleet's logs are kept in %s", dst)
}
