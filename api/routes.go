package api

import (
	"net/http"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// route is one operation of the API: how it is served and how the OpenAPI
// document describes it. The document is built from this table alone, and
// the table alone registers the handlers: what is served is what is
// described.
type route struct {
	method string
	// path is under Prefix, with {name} path parameters.
	path    string
	id      string // operationId
	summary string
	// action is what the caller needs the right to do, for the document.
	action authz.Action
	query  []param
	// body is a value of the request body's type; nil: none.
	body any
	// status is the success status; result a value of its body's type (nil:
	// none), produces its content types (default JSON).
	status   int
	result   any
	produces []string
	// errors are the problem types it may answer besides those of every
	// route (unauthenticated, forbidden, invalid-request, internal).
	errors []ProblemType
	handle func(*call) error
}

// param is a query parameter.
type param struct {
	name, desc string
	typ        string // "string", "integer" or "boolean"
	required   bool
}

// pathParams describe the path parameters of every route.
var pathParams = map[string]string{
	"project":   "project name",
	"workspace": "workspace name",
	"id":        "run ID (printed when the run started; runs lists them)",
	"revision":  "release revision number (1, 2, ...)",
	"run":       "the drift check's run ID",
}

var (
	pageParams = []param{
		{name: "limit", typ: "integer", desc: "at most this many items (1-500, default 50)"},
		{name: "page_token", typ: "string", desc: "the nextPageToken of the previous page"},
	}
	runsQuery = append([]param{
		{name: "project", typ: "string", desc: "only runs of this project"},
		{name: "workspace", typ: "string", desc: "only runs in this workspace"},
		{name: "operation", typ: "string", desc: "generate, preview, apply, destroy, rollback, drift (or drift-check), remediate"},
		{name: "status", typ: "string", desc: "running, awaiting-approval, succeeded (completed), failed, cancelled"},
	}, pageParams...)
)

// List bodies: a page of items and the token of the next page.
type (
	projectList struct {
		Items []ProjectInfo `json:"items"`
	}
	stackList struct {
		Items []StackInfo `json:"items"`
	}
	workspaceLst struct {
		Items []string `json:"items"`
	}
	runList struct {
		Items         []client.RunInfo `json:"items"`
		NextPageToken string           `json:"nextPageToken,omitempty"`
	}
	releaseList struct {
		Items         []ReleaseSummary `json:"items"`
		NextPageToken string           `json:"nextPageToken,omitempty"`
	}
	driftReportList struct {
		Items         []*drift.Report `json:"items"`
		NextPageToken string          `json:"nextPageToken,omitempty"`
	}
	scheduleList struct {
		Items []*client.DriftSchedule `json:"items"`
	}
)

var every = []ProblemType{ProblemUnauthenticated, ProblemForbidden, ProblemInvalidRequest, ProblemInternal}

var routes = []route{
	{method: http.MethodGet, path: "/projects", id: "listProjects", summary: "List the projects with releases, and their workspaces", action: authz.List,
		status: http.StatusOK, result: projectList{}, handle: listProjects},
	{method: http.MethodGet, path: "/projects/{project}/stacks", id: "listStacks", summary: "List a project's stacks: the stack of its latest release in each workspace", action: authz.List,
		status: http.StatusOK, result: stackList{}, errors: []ProblemType{ProblemNotFound}, handle: listStacks},

	{method: http.MethodGet, path: "/workspaces", id: "listWorkspaces", summary: "List the workspaces", action: authz.List,
		status: http.StatusOK, result: workspaceLst{}, handle: listWorkspaces},
	{method: http.MethodGet, path: "/workspaces/{workspace}", id: "getWorkspace", summary: "Show a workspace's settings, secrets left out", action: authz.Show,
		status: http.StatusOK, result: engine.Workspace{}, errors: []ProblemType{ProblemNotFound}, handle: getWorkspace},
	{method: http.MethodPost, path: "/workspaces", id: "createWorkspace", summary: "Create a workspace (admins)", action: authz.Workspace,
		body: WorkspaceRequest{}, status: http.StatusCreated, result: engine.Workspace{}, errors: []ProblemType{ProblemRefused}, handle: createWorkspace},
	{method: http.MethodPut, path: "/workspaces/{workspace}", id: "updateWorkspace", summary: "Replace a workspace's settings (admins)", action: authz.Workspace,
		body: WorkspaceRequest{}, status: http.StatusOK, result: engine.Workspace{}, errors: []ProblemType{ProblemRefused}, handle: updateWorkspace},
	{method: http.MethodDelete, path: "/workspaces/{workspace}", id: "deleteWorkspace", summary: "Delete a workspace (admins); one with releases only with force", action: authz.Workspace,
		query:  []param{{name: "force", typ: "boolean", desc: "delete it although projects have releases in it"}},
		status: http.StatusNoContent, errors: []ProblemType{ProblemRefused, ProblemNotFound}, handle: deleteWorkspace},

	{method: http.MethodPost, path: "/runs", id: "startRun", summary: "Start a run: generate, preview, apply, destroy, rollback or drift-check (each needs the right to do that operation); answers at once with its ID",
		body: RunRequest{}, status: http.StatusAccepted, result: RunStarted{},
		errors: []ProblemType{ProblemBusy, ProblemRefused, ProblemIdempotencyReused, ProblemIdempotencyPending, ProblemUnavailable}, handle: startRun},
	{method: http.MethodGet, path: "/runs", id: "listRuns", summary: "List runs, newest first", action: authz.List, query: runsQuery,
		status: http.StatusOK, result: runList{}, errors: []ProblemType{ProblemUnavailable}, handle: listRuns},
	{method: http.MethodGet, path: "/runs/{id}", id: "getRun", summary: "Show a run: status, stage, counts, who started and approved it, times, revision, each resource", action: authz.Show,
		status: http.StatusOK, result: RunView{}, errors: []ProblemType{ProblemNotFound, ProblemUnavailable}, handle: getRun},
	{method: http.MethodGet, path: "/runs/{id}/result", id: "getRunResult", summary: "A run's result: generate the Spec (YAML, or JSON by Accept); preview its changes and plan digest; apply, destroy and rollback the plan and each resource's outcome; drift-check its report", action: authz.Show,
		status: http.StatusOK, result: RunResult{}, produces: []string{"application/json", "application/yaml"},
		errors: []ProblemType{ProblemNotFound, ProblemRunNotEnded, ProblemNotAcceptable}, handle: getRunResult},
	{method: http.MethodGet, path: "/runs/{id}/logs", id: "getRunLogs", summary: "The log a run kept; with follow=1 as server-sent events until the run ends", action: authz.Logs,
		query:  []param{{name: "follow", typ: "boolean", desc: "stream as text/event-stream: events log (a line), node (a resource's progress) and end (the run's status)"}},
		status: http.StatusOK, produces: []string{"text/plain", "text/event-stream"}, errors: []ProblemType{ProblemNotFound}, handle: getRunLogs},
	{method: http.MethodPost, path: "/runs/{id}/approve", id: "approveRun", summary: "Approve the plan a run awaits approval of, named by its digest", action: authz.Approve,
		body: AnswerRequest{}, status: http.StatusOK, result: runspec.ApprovalAnswer{}, errors: []ProblemType{ProblemNotFound, ProblemNotAnswerable}, handle: approveRun},
	{method: http.MethodPost, path: "/runs/{id}/reject", id: "rejectRun", summary: "Reject the plan a run awaits approval of; its release ends failed with the reason", action: authz.Reject,
		body: AnswerRequest{}, status: http.StatusOK, result: runspec.ApprovalAnswer{}, errors: []ProblemType{ProblemNotFound, ProblemNotAnswerable}, handle: rejectRun},
	{method: http.MethodPost, path: "/runs/{id}/cancel", id: "cancelRun", summary: "Cancel a run: no resource starts any more; the ones in flight finish", action: authz.Cancel,
		body: CancelRequest{}, status: http.StatusAccepted, result: RunStarted{}, errors: []ProblemType{ProblemNotFound, ProblemRunEnded}, handle: cancelRun},

	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/releases", id: "listReleases", summary: "List the releases of a project in a workspace, oldest first", action: authz.List,
		query: pageParams, status: http.StatusOK, result: releaseList{}, handle: listReleases},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/releases/{revision}", id: "getRelease", summary: "Show a release, sensitive values masked", action: authz.Show,
		status: http.StatusOK, result: engine.Release{}, errors: []ProblemType{ProblemNotFound}, handle: getRelease},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/releases/{revision}/diff", id: "diffReleases", summary: "The differences between the specs of two revisions", action: authz.Show,
		query:  []param{{name: "to", typ: "integer", required: true, desc: "the revision to compare with"}},
		status: http.StatusOK, result: ReleaseDiff{}, errors: []ProblemType{ProblemNotFound}, handle: diffReleases},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/status", id: "getStatus", summary: "Live health of the latest release's resources", action: authz.Status,
		status: http.StatusOK, result: runspec.StackStatus{}, errors: []ProblemType{ProblemNotFound, ProblemUnavailable}, handle: getStatus},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/drift-reports", id: "listDriftReports", summary: "The stored drift reports of a stack, newest first", action: authz.DriftReport,
		query: pageParams, status: http.StatusOK, result: driftReportList{}, handle: listDriftReports},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/drift-reports/{run}", id: "getDriftReport", summary: "One drift report, by its check's run ID, or latest", action: authz.DriftReport,
		status: http.StatusOK, result: drift.Report{}, errors: []ProblemType{ProblemNotFound}, handle: getDriftReport},
	{method: http.MethodGet, path: "/projects/{project}/drift-schedules", id: "listDriftSchedules", summary: "The drift-check schedules of a project", action: authz.List,
		status: http.StatusOK, result: scheduleList{}, errors: []ProblemType{ProblemUnavailable}, handle: listDriftSchedules},
	{method: http.MethodGet, path: "/projects/{project}/workspaces/{workspace}/drift-schedule", id: "getDriftSchedule", summary: "A stack's drift-check schedule: settings, recent and next checks", action: authz.Show,
		status: http.StatusOK, result: client.DriftSchedule{}, errors: []ProblemType{ProblemNotFound, ProblemUnavailable}, handle: getDriftSchedule},
}
