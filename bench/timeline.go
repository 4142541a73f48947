package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/kumoproj/kumo/client"
)

// timelineDir (-timeline) is where each kumo run's history goes as a
// timeline: one line per event, its time from the run's start and from the
// event before, and what it was (the activity's type, a marker's name; for a
// local activity its type, when it completed and its summary, since its
// marker is recorded only with the workflow task that ran it). It is
// how the fixed cost of a run is found: the gaps between an activity's
// Scheduled, Started and Completed, and the workflow tasks between them.
var timelineDir string

// writeTimeline writes r's history to timelineDir/name.txt, with a summary
// line at the end: events, workflow tasks, activities by type, local
// activities, and the client's own time around the run (took less the
// history's first-to-last span).
func (k *kumo) writeTimeline(ctx context.Context, name string, r *client.Run, took time.Duration) error {
	if timelineDir == "" {
		return nil
	}
	var b strings.Builder
	it := k.tc.GetWorkflowHistory(ctx, r.WorkflowID, r.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var first, prev time.Time
	scheduled := map[int64]string{}
	activities := map[string]int{}
	var tasks, locals, events int
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return err
		}
		events++
		at := e.GetEventTime().AsTime()
		if first.IsZero() {
			first, prev = at, at
		}
		what := ""
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			n := e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			scheduled[e.GetEventId()] = n
			activities[n]++
			what = n
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			what = scheduled[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			what = scheduled[e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			tasks++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			what = markerName(e)
			if what == "LocalActivity" {
				locals++
				if typ, done, ok := localActivity(e); ok {
					what += fmt.Sprintf(" %s, done at %.1f ms", typ, msf(done.Sub(first)))
					if sm := e.GetUserMetadata().GetSummary().GetData(); len(sm) > 0 {
						what += " " + string(sm)
					}

				}
			}
		}
		fmt.Fprintf(&b, "%4d %8.1f ms %+7.1f ms  %s %s\n", e.GetEventId(), msf(at.Sub(first)), msf(at.Sub(prev)),
			strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"), what)
		prev = at
	}
	span := prev.Sub(first)
	fmt.Fprintf(&b, "\nevents %d, workflow tasks %d, local activities %d, activities %v\n", events, tasks, locals, activities)
	fmt.Fprintf(&b, "history span %.1f ms, client wall %.1f ms, outside the history %.1f ms\n", msf(span), msf(took), msf(took-span))
	return os.WriteFile(filepath.Join(timelineDir, name+".txt"), []byte(b.String()), 0o644)
}

func markerName(e *historypb.HistoryEvent) string {
	return e.GetMarkerRecordedEventAttributes().GetMarkerName()
}

// timelineName names the timeline of op of a peers or install row's project.
func timelineName(project string, op peerOp) string {
	return project + "-" + strings.NewReplacer(" ", "-", "/", "").Replace(peerOpNames[op])
}

// localActivity reads a local activity's marker: its type and when it
// completed (the SDK records both in the marker's "data" detail).
func localActivity(e *historypb.HistoryEvent) (typ string, done time.Time, ok bool) {
	data := e.GetMarkerRecordedEventAttributes().GetDetails()["data"].GetPayloads()
	if len(data) == 0 {
		return "", time.Time{}, false
	}
	var m struct {
		ActivityType string
		ReplayTime   time.Time
	}
	if json.Unmarshal(data[0].GetData(), &m) != nil || m.ActivityType == "" {
		return "", time.Time{}, false
	}
	return m.ActivityType, m.ReplayTime, true
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
