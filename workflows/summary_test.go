package workflows

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/kumoproj/kumo/activities"
)

// resourceVerbs start the summary of every per-resource step.
var resourceVerbs = []string{"preview ", "refresh ", "apply ", "delete ", "undo ", "wait for "}

// TestEveryResourceStepIsSummarised: in every recorded history, each activity
// that works on one resource (its input names it) or a batch of them (its
// input lists them: the summary names how many, the first and the last) and each local activity
// (previews, applies; not the read of the event sinks) carries a summary naming the action and the resource, so the Web
// UI's timeline reads like a deployment log.
func TestEveryResourceStepIsSummarised(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h historypb.History
		if err := protojson.Unmarshal(data, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range h.Events {
			var id string
			switch e.EventType {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				payloads := e.GetActivityTaskScheduledEventAttributes().GetInput().GetPayloads()
				id = payloadID(payloads)
				if ids := payloadIDs(payloads); len(ids) > 0 {
					// A batch names how many, the first and the last.
					id = ids[0]
					if len(ids) > 1 {
						id = fmt.Sprintf("%d resources: %s … %s", len(ids), ids[0], ids[len(ids)-1])
					}
				}
				if id == "" {
					continue // not a per-resource step (create release, plan, ...)
				}
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				a := e.GetMarkerRecordedEventAttributes()
				if a.GetMarkerName() != "LocalActivity" {
					continue // version markers
				}
				var data struct{ ActivityType string }
				if p := a.GetDetails()["data"].GetPayloads(); len(p) > 0 {
					_ = json.Unmarshal(p[0].GetData(), &data)
				}
				if data.ActivityType == activities.EventSinksActivity {
					continue // not a per-resource step: reads the workspace's event sinks
				}
				if slices.Contains(releaseActivities, data.ActivityType) {
					continue // not a per-resource step: the release's (create release, plan, ...)
				}
				if data.ActivityType == activities.CheckDriftActivity {
					continue // not a per-resource step: checks the whole stack (checkDrift)
				}
				id = payloadID(a.GetDetails()["result"].GetPayloads()) // a failed one has none
			default:
				continue
			}
			checked++
			var summary string
			if p := e.GetUserMetadata().GetSummary(); p != nil {
				if err := json.Unmarshal(p.GetData(), &summary); err != nil {
					t.Errorf("%s event %d: summary %s: %v", f, e.EventId, p.GetData(), err)
				}
			}
			verb := false
			for _, v := range resourceVerbs {
				verb = verb || strings.HasPrefix(summary, v)
			}
			if !verb || !strings.Contains(summary, id) {
				t.Errorf("%s event %d (%s): summary %q does not name the action and resource %q", f, e.EventId, e.EventType, summary, id)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no per-resource steps found in the recorded histories")
	}
}

// payloadIDs is the "ids" field of a JSON payload (a BatchInput).
func payloadIDs(payloads []*commonpb.Payload) []string {
	if len(payloads) == 0 {
		return nil
	}
	var v struct {
		IDs []string `json:"ids"`
	}
	_ = json.Unmarshal(payloads[0].GetData(), &v)
	return v.IDs
}

// payloadID is the "id" field of a JSON payload (a NodeInput, a Change), or
// its change's (a NodePreview).
func payloadID(payloads []*commonpb.Payload) string {
	if len(payloads) == 0 {
		return ""
	}
	var v struct {
		ID     string `json:"id"`
		Change struct {
			ID string `json:"id"`
		} `json:"change"`
	}
	_ = json.Unmarshal(payloads[0].GetData(), &v)
	if v.ID == "" {
		return v.Change.ID
	}
	return v.ID
}
