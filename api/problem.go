package api

import (
	"encoding/json"
	"net/http"
)

// ProblemType is the stable `type` of an API error (RFC 9457): clients
// branch on it, never on the detail text.
type ProblemType string

// problemPrefix starts every problem type: a URN, so that the types are
// stable names without pretending to be pages someone must host.
const problemPrefix = "urn:kumo:problem:"

// The problem types the API answers with, and the status of each.
const (
	ProblemUnauthenticated    ProblemType = problemPrefix + "unauthenticated"
	ProblemForbidden          ProblemType = problemPrefix + "forbidden"
	ProblemNotFound           ProblemType = problemPrefix + "not-found"
	ProblemMethodNotAllowed   ProblemType = problemPrefix + "method-not-allowed"
	ProblemInvalidRequest     ProblemType = problemPrefix + "invalid-request"
	ProblemNotAcceptable      ProblemType = problemPrefix + "not-acceptable"
	ProblemBusy               ProblemType = problemPrefix + "busy"
	ProblemNotAnswerable      ProblemType = problemPrefix + "not-answerable"
	ProblemRunEnded           ProblemType = problemPrefix + "run-ended"
	ProblemRunNotEnded        ProblemType = problemPrefix + "run-not-ended"
	ProblemRefused            ProblemType = problemPrefix + "refused"
	ProblemIdempotencyReused  ProblemType = problemPrefix + "idempotency-key-reused"
	ProblemIdempotencyPending ProblemType = problemPrefix + "idempotency-key-pending"
	ProblemUnavailable        ProblemType = problemPrefix + "unavailable"
	ProblemInternal           ProblemType = problemPrefix + "internal"
)

// problemTypes are every type with its status and title, for the OpenAPI
// document and the responses.
var problemTypes = map[ProblemType]struct {
	status int
	title  string
}{
	ProblemUnauthenticated:    {http.StatusUnauthorized, "No valid credential"},
	ProblemForbidden:          {http.StatusForbidden, "Not allowed"},
	ProblemNotFound:           {http.StatusNotFound, "No such resource"},
	ProblemMethodNotAllowed:   {http.StatusMethodNotAllowed, "Method not allowed"},
	ProblemInvalidRequest:     {http.StatusBadRequest, "Invalid request"},
	ProblemNotAcceptable:      {http.StatusNotAcceptable, "No representation for Accept"},
	ProblemBusy:               {http.StatusConflict, "Another run is in progress"},
	ProblemNotAnswerable:      {http.StatusConflict, "The run does not await this answer"},
	ProblemRunEnded:           {http.StatusConflict, "The run has ended"},
	ProblemRunNotEnded:        {http.StatusConflict, "The run has not ended"},
	ProblemRefused:            {http.StatusUnprocessableEntity, "The request was refused"},
	ProblemIdempotencyReused:  {http.StatusUnprocessableEntity, "Idempotency key used for another request"},
	ProblemIdempotencyPending: {http.StatusConflict, "The request with this idempotency key has not finished"},
	ProblemUnavailable:        {http.StatusServiceUnavailable, "Temporal is not available"},
	ProblemInternal:           {http.StatusInternalServerError, "Internal error"},
}

// Problem is an application/problem+json body (RFC 9457). A refusal names
// who, what and where in its extension members.
type Problem struct {
	Type   ProblemType `json:"type"`
	Title  string      `json:"title"`
	Status int         `json:"status"`
	Detail string      `json:"detail,omitempty"`
	// Instance is the request's path.
	Instance string `json:"instance,omitempty"`
	// Subject, Action, Project and Workspace name a refusal's who, what and
	// where (forbidden).
	Subject   string `json:"subject,omitempty"`
	Action    string `json:"action,omitempty"`
	Project   string `json:"project,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// newProblem is a problem of type t with detail.
func newProblem(t ProblemType, detail string) *Problem {
	pt, ok := problemTypes[t]
	if !ok {
		t, pt = ProblemInternal, problemTypes[ProblemInternal]
	}
	return &Problem{Type: t, Title: pt.title, Status: pt.status, Detail: detail}
}

func (p *Problem) Error() string { return p.Detail }

// write sends p as application/problem+json.
func (p *Problem) write(w http.ResponseWriter, r *http.Request) {
	if p.Instance == "" && r != nil {
		p.Instance = r.URL.Path
	}
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kumo"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
