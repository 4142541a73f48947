package activities

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/notify"
)

// sinkActivities returns activities over a backend whose workspace "w" has
// sinks, and the operator's configuration op.
func sinkActivities(t *testing.T, op notify.Operator, sinks ...notify.Sink) *Activities {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PutWorkspace(context.Background(), &engine.Workspace{Name: "w", Notifications: notify.Config{Sinks: sinks}}); err != nil {
		t.Fatal(err)
	}
	a := New(b, nil, nil)
	SetEvents(a, op)
	return a
}

// TestDeliverEvent: a generic sink gets the event as signed JSON, a Slack
// sink a Slack message, both with the event's ID; the operator's sinks are
// listed after the workspace's, and an awaiting-approval event carries the
// approve URL under the operator's API URL.
func TestDeliverEvent(t *testing.T) {
	t.Setenv(testSecretEnv, "s3cret")
	type post struct {
		path, id string
		signed   bool
		body     []byte
	}
	var posts []post
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		posts = append(posts, post{r.URL.Path, r.Header.Get(notify.HeaderEventID), verify("s3cret", r, body), body})
	}))
	defer srv.Close()
	a := sinkActivities(t, notify.Operator{APIURL: "https://kumo.example.com", Sinks: []notify.Sink{
		{Name: "chat", Kind: notify.KindSlack, URL: srv.URL + "/operator-slack", AllowPrivate: true, Events: []string{notify.Failed}}}},
		notify.Sink{Name: "audit", Kind: notify.KindWebhook, URL: srv.URL + "/generic", SecretEnv: testSecretEnv, AllowPrivate: true},
		notify.Sink{Name: "chat", Kind: notify.KindSlack, URL: srv.URL + "/slack", AllowPrivate: true},
	)
	ctx := context.Background()
	refs, err := a.EventSinks(ctx, SinksInput{Project: "p", Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 3 || refs[0].Name != "audit" || refs[2].Name != "operator/chat" || refs[2].Wants(notify.Succeeded) || !refs[2].Wants(notify.Failed) {
		t.Fatalf("sinks %+v", refs)
	}
	run := notify.Run{WorkflowID: "kumo/p/w", RunID: "r1", Operation: "apply", Project: "p", Workspace: "w"}
	e := notify.NewAwaitingApproval(run, notify.Plan{Create: 1, Digest: "sha256:00112233445566778899"}, time.Now())
	for _, s := range []string{"audit", "chat"} {
		if err := a.DeliverEvent(ctx, DeliverInput{Project: "p", Workspace: "w", Sink: s, Event: e}); err != nil {
			t.Fatal(err)
		}
	}
	if len(posts) != 2 || posts[0].path != "/generic" || !posts[0].signed || posts[1].path != "/slack" || posts[1].signed {
		t.Fatalf("posts %+v", posts)
	}
	var got notify.Event
	if err := json.Unmarshal(posts[0].body, &got); err != nil || got.ID != e.ID || posts[0].id != e.ID ||
		got.Approve == nil || got.Approve.URL != "https://kumo.example.com/api/v1/runs/r1/approve" {
		t.Errorf("generic body %s (%v)", posts[0].body, err)
	}
	var slack notify.SlackMessage
	if err := json.Unmarshal(posts[1].body, &slack); err != nil || slack.Text == "" || len(slack.Blocks) == 0 || posts[1].id != e.ID {
		t.Errorf("slack body %s (%v)", posts[1].body, err)
	}
}

// TestDeliverEventFailures: a sink answering 500 is an error Temporal
// retries, naming the sink, its host and the answer, not the URL's token; a
// sink gone from the workspace, a private address the sink does not allow,
// and a plain-http URL to another host are refused, not retried.
func TestDeliverEventFailures(t *testing.T) {
	t.Setenv(testSecretEnv, "s3cret")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	a := sinkActivities(t, notify.Operator{},
		notify.Sink{Name: "down", Kind: notify.KindSlack, URL: srv.URL + "/services/t0ken", AllowPrivate: true},
		notify.Sink{Name: "private", Kind: notify.KindSlack, URL: srv.URL + "/services/t0ken"},
		// stored by hand: ParseWorkspace refuses it
		notify.Sink{Name: "plain", Kind: notify.KindSlack, URL: "http://hooks.example.com/services/t0ken"},
	)
	e := notify.NewSucceeded(notify.Run{WorkflowID: "kumo/p/w", RunID: "r1", Operation: "apply", Project: "p", Workspace: "w"}, nil, time.Now())
	deliver := func(sink string) error {
		return a.DeliverEvent(context.Background(), DeliverInput{Project: "p", Workspace: "w", Sink: sink, Event: e})
	}
	err := deliver("down")
	var app *temporal.ApplicationError
	if err == nil || errors.As(err, &app) && app.NonRetryable() || !strings.Contains(err.Error(), "event sink down (http://127.0.0.1") ||
		!strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "t0ken") {
		t.Errorf("a sink answering 500: %v", err)
	}
	for sink, want := range map[string]string{
		"gone":    "sink gone is no longer configured for workspace w",
		"private": "a loopback address (allow it with the sink's allowPrivate in the workspace's notifications)",
		"plain":   "notifications sink plain.url: http to hooks.example.com",
	} {
		err := deliver(sink)
		if !errors.As(err, &app) || !app.NonRetryable() || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "t0ken") {
			t.Errorf("%s: %v, want a refusal with %q", sink, err, want)
		}
	}
}
