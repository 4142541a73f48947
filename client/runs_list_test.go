package client

import (
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/kumoproj/kumo/runspec"
)

func TestRunFilterQuery(t *testing.T) {
	for _, tc := range []struct {
		filter RunFilter
		want   []string // every one is in the query
		err    string
	}{
		{RunFilter{}, []string{"KumoProject IS NOT NULL"}, ""},
		{RunFilter{Project: "shop", Workspace: "prod", Operation: "apply"}, []string{"KumoProject = 'shop'", "KumoWorkspace = 'prod'", "KumoOperation = 'apply'"}, ""},
		{RunFilter{Project: "shop", Status: "awaiting-approval"}, []string{"KumoProject = 'shop' AND ", "KumoStatus = 'awaiting-approval'", "ExecutionStatus = 'Running'"}, ""},
		{RunFilter{Status: "succeeded"}, []string{"ExecutionStatus = 'Completed'"}, ""},
		{RunFilter{Status: "cancelled"}, []string{"ExecutionStatus = 'Canceled'", "KumoStatus = 'cancelled'"}, ""},
		{RunFilter{Status: "done"}, nil, `unknown status "done"`},
		{RunFilter{Operation: "deploy"}, nil, `unknown operation "deploy"`},
		{RunFilter{Project: "x' OR KumoProject != '"}, nil, "quotes"},
	} {
		q, err := tc.filter.Query()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: query %q, error %v; want an error with %q", tc.filter, q, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.filter, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(q, w) {
				t.Errorf("%+v: query %q lacks %q", tc.filter, q, w)
			}
		}
	}
}

func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		execution enumspb.WorkflowExecutionStatus
		kumo      string
		want      string
	}{
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "", "running"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "awaiting-approval", "awaiting-approval"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, "applying", "applying"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "succeeded", "succeeded"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, "", "succeeded"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "failed", "failed"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "applying", "failed"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, "cancelled", "cancelled"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, "cancelled", "cancelled"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, "applying", "terminated"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, "", "timed-out"},
	} {
		if got := runStatus(tc.execution, tc.kumo); got != tc.want {
			t.Errorf("runStatus(%s, %q) = %q, want %q", tc.execution, tc.kumo, got, tc.want)
		}
	}
}

// TestRunInfoReadsAttributesAndMemo: a visibility row becomes a RunInfo with
// kumo's search attributes and the preview's counts, without asking the run.
func TestRunInfoReadsAttributesAndMemo(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payload := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: "kumo/shop/prod", RunId: "0f8e2c1a-0000-4000-8000-000000000001"},
		Type:      &commonpb.WorkflowType{Name: runspec.ApplyWorkflow},
		StartTime: timestamppb.New(start), CloseTime: timestamppb.New(start.Add(90 * time.Second)),
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_FAILED,
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
			"KumoProject": payload("shop"), "KumoWorkspace": payload("prod"), "KumoStack": payload("web"),
			"KumoOperation": payload("apply"), "KumoRevision": payload(int64(7)), "KumoStatus": payload("cancelled"),
		}},
		Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{
			runspec.ChangesMemo: payload(runspec.ChangeCounts{Create: 3, Update: 1, Unchanged: 5}),
		}},
	}
	got := runInfo(e, converter.GetDefaultDataConverter())
	if got.Project != "shop" || got.Workspace != "prod" || got.Stack != "web" || got.Operation != "apply" || got.Revision != 7 ||
		got.Status != "cancelled" || got.RunID != e.Execution.RunId || got.WorkflowID != "kumo/shop/prod" {
		t.Errorf("runInfo = %+v", got)
	}
	if got.Running() || got.Duration(time.Now()) != 90*time.Second {
		t.Errorf("running %v, duration %s; want ended after 90s", got.Running(), got.Duration(time.Now()))
	}
	if got.Changes == nil || got.Changes.String() != "+3 ~1 -0" || got.Changes.Unchanged != 5 {
		t.Errorf("changes %+v, want +3 ~1 -0 and 5 unchanged", got.Changes)
	}

	// A run without kumo's memo (generate, an older kumo) has no counts; its
	// operation comes from the workflow type.
	e.Memo, e.SearchAttributes, e.CloseTime = nil, nil, nil
	e.Status = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	got = runInfo(e, converter.GetDefaultDataConverter())
	if got.Changes != nil || got.Operation != "apply" || !got.Running() || got.Status != "running" {
		t.Errorf("runInfo without attributes = %+v", got)
	}
}

func TestClientRunURL(t *testing.T) {
	c := &Client{opts: Options{Namespace: "default"}}
	if u := c.RunURL("kumo/shop/prod", "r1"); u != "" {
		t.Errorf("RunURL without a UI = %q, want empty", u)
	}
	c.opts.UIBaseURL = "http://127.0.0.1:8233/"
	if u, want := c.RunURL("kumo/shop/prod", "r1"), "http://127.0.0.1:8233/namespaces/default/workflows/kumo%2Fshop%2Fprod/r1/history"; u != want {
		t.Errorf("RunURL = %q, want %q", u, want)
	}
}
