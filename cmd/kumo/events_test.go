package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
)

// sinkPost is one POST an event receiver took.
type sinkPost struct {
	event, id string
	signed    bool
	// body is the generic event as JSON, or the Slack message.
	body map[string]any
}

// eventReceiver is an HTTP server with one path per sink: /slack checks
// Slack's documented incoming-webhook body (a JSON object with a non-empty
// `text`; `blocks`, if any, an array of objects each of a Block Kit type
// whose text objects are of type mrkdwn or plain_text), /generic checks the
// signature as drift webhook receivers do, /down answers 500 to everything.
type eventReceiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret []byte
	mu     sync.Mutex
	posts  map[string][]sinkPost // by path
}

func newEventReceiver(t *testing.T, secret string) *eventReceiver {
	r := &eventReceiver{t: t, secret: []byte(secret), posts: map[string][]sinkPost{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *eventReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	p := sinkPost{event: req.Header.Get("X-Kumo-Event"), id: req.Header.Get("X-Kumo-Event-Id"), signed: verify(r.secret, req, body)}
	if err := json.Unmarshal(body, &p.body); err != nil {
		r.t.Errorf("%s: the body is not a JSON object: %v: %s", req.URL.Path, err, body)
	}
	if req.URL.Path == "/slack" {
		if err := checkSlackBody(p.body); err != nil {
			r.t.Errorf("/slack: %v: %s", err, body)
			w.WriteHeader(http.StatusBadRequest) // as Slack answers a bad payload
			return
		}
	}
	r.mu.Lock()
	r.posts[req.URL.Path] = append(r.posts[req.URL.Path], p)
	r.mu.Unlock()
	if req.URL.Path == "/down" {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// checkSlackBody is Slack's documented shape of an incoming webhook's body.
func checkSlackBody(msg map[string]any) error {
	if s, ok := msg["text"].(string); !ok || s == "" {
		return fmt.Errorf("no non-empty text")
	}
	raw, ok := msg["blocks"]
	if !ok {
		return nil
	}
	blocks, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("blocks is not an array")
	}
	for i, b := range blocks {
		block, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("blocks[%d] is not an object", i)
		}
		typ, _ := block["type"].(string)
		if !slices.Contains([]string{"section", "header", "context", "divider", "actions", "image", "rich_text", "input", "file", "video"}, typ) {
			return fmt.Errorf("blocks[%d]: type %q is not a Block Kit block", i, typ)
		}
		var texts []any
		if tx, ok := block["text"]; ok {
			texts = append(texts, tx)
		}
		for _, k := range []string{"fields", "elements"} {
			if l, ok := block[k].([]any); ok {
				texts = append(texts, l...)
			}
		}
		for _, tx := range texts {
			o, _ := tx.(map[string]any)
			if tt, _ := o["type"].(string); tt != "mrkdwn" && tt != "plain_text" {
				return fmt.Errorf("blocks[%d] (%s): a text object of type %q", i, typ, tt)
			}
			if s, _ := o["text"].(string); s == "" {
				return fmt.Errorf("blocks[%d] (%s): an empty text", i, typ)
			}
		}
	}
	return nil
}

// of returns the POSTs to path of event kind.
func (r *eventReceiver) of(path, event string) []sinkPost {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sinkPost
	for _, p := range r.posts[path] {
		if p.event == event {
			out = append(out, p)
		}
	}
	return out
}

// waitFor waits until path got an event of kind.
func (r *eventReceiver) waitFor(path, event string) sinkPost {
	r.t.Helper()
	waitFor(r.t, path+" to get "+event, time.Minute, func() bool { return len(r.of(path, event)) > 0 })
	return r.of(path, event)[0]
}

// sinksWorkspace is a workspace file with a Slack sink, a generic sink and a
// sink that is down (for succeeded only), all on the receiver (loopback, so
// allowed by allowPrivate).
func (r *eventReceiver) sinksWorkspace() string {
	return fmt.Sprintf(`notifications:
  sinks:
  - {name: team-chat, kind: slack, url: %[1]q, allowPrivate: true}
  - {name: audit, kind: webhook, url: %[2]q, secretEnv: KUMO_WEBHOOK_TEST_SECRET, allowPrivate: true}
  - {name: down, kind: slack, url: %[3]q, allowPrivate: true, events: [succeeded]}
`, r.srv.URL+"/slack", r.srv.URL+"/generic", r.srv.URL+"/down")
}

// deliveries returns, for every DeliverEvent of the run, its summary (as
// the Web UI shows it, decoded with the codec key) and how it ended.
func deliveries(t *testing.T, home, address, workflowID, runID string) map[string]string {
	t.Helper()
	keys, err := keyring.Load(filepath.Join(home, "codec.keys"))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := sdkclient.Dial(sdkclient.Options{HostPort: address, Logger: sdklog.NewStructuredLogger(quietLogger()),
		ConnectionOptions: ownerConnection(t, home), DataConverter: codec.DataConverter(keys)})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	summaries := map[int64]string{}
	out := map[string]string{}
	it := tc.GetWorkflowHistory(context.Background(), workflowID, runID, false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "DeliverEvent" {
			decoded, err := codec.New(keys).Decode([]*commonpb.Payload{ev.GetUserMetadata().GetSummary()})
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(decoded[0].Data, &s); err != nil {
				t.Fatalf("summary %s: %v", decoded[0].Data, err)
			}
			summaries[ev.GetEventId()] = s
			out[s] = "scheduled"
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && summaries[a.GetScheduledEventId()] != "" {
			out[summaries[a.GetScheduledEventId()]] = "completed"
		}
		if a := ev.GetActivityTaskFailedEventAttributes(); a != nil && summaries[a.GetScheduledEventId()] != "" {
			out[summaries[a.GetScheduledEventId()]] = "failed: " + a.GetFailure().GetMessage()
		}
	}
	return out
}

// TestRunEventsToSlackAndWebhook: an apply that waits for approval tells a
// Slack sink (in Slack's shape) and a generic sink (signed) that it awaits
// approval, with the plan's counts, digest and the approve command; approved
// with that digest, it tells both it succeeded: each event exactly once,
// with the same ID in the header and the body. A sink answering 500 does not
// fail the run, and its failed delivery is in the run's history by name. A
// drift check tells the Slack sink of the drift in Slack's shape.
func TestRunEventsToSlackAndWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := marker(t, "eventsecret")
	rcv := newEventReceiver(t, secret)
	e.environ = append(e.environ, "KUMO_WEBHOOK_TEST_SECRET="+secret)
	srv := e.startServer("--headless")
	e.ok("workspace", "update", "default", "--file", e.writeSpec("ws.yaml", rcv.sinksWorkspace()))

	runID, wait := e.startAwaiting(1, "-f", e.approvalSpec("one"))
	slack := rcv.waitFor("/slack", "awaiting-approval")
	generic := rcv.waitFor("/generic", "awaiting-approval")
	if !generic.signed || generic.id == "" || generic.body["id"] != generic.id {
		t.Errorf("generic awaiting-approval: signed %v, header ID %q, body %v", generic.signed, generic.id, generic.body)
	}
	plan, _ := generic.body["plan"].(map[string]any)
	digest, _ := plan["digest"].(string)
	if plan["create"] != 2.0 || !strings.HasPrefix(digest, "sha256:") {
		t.Errorf("generic awaiting-approval plan %v, want 2 to create and a digest", plan)
	}
	approve, _ := generic.body["approve"].(map[string]any)
	command, _ := approve["command"].(string)
	if !strings.HasPrefix(command, "kumo approve "+runID+" ") || !strings.Contains(command, "--digest "+digest) {
		t.Errorf("approve command %q, want kumo approve %s ... --digest %s", command, runID, digest)
	}
	if slack.id != generic.id || !strings.Contains(fmt.Sprint(slack.body), slack.id) || !strings.Contains(fmt.Sprint(slack.body), "kumo approve "+runID) {
		t.Errorf("slack awaiting-approval: header ID %q (generic's %q), body %v", slack.id, generic.id, slack.body)
	}

	// Approved with the digest the event carried.
	e.ok("approve", runID, "--digest", digest)
	if r := wait(); r.code != 0 {
		t.Fatalf("the approved apply (with a sink answering 500): %s", r)
	}
	rcv.waitFor("/slack", "succeeded")
	rcv.waitFor("/generic", "succeeded")
	for _, path := range []string{"/slack", "/generic"} {
		for _, ev := range []string{"awaiting-approval", "succeeded"} {
			if n := len(rcv.of(path, ev)); n != 1 {
				t.Errorf("%s got %s %d times, want once", path, ev, n)
			}
		}
	}
	if ok := rcv.of("/generic", "succeeded"); len(ok) == 1 && (!ok[0].signed || ok[0].body["id"] != ok[0].id || ok[0].id == generic.id) {
		t.Errorf("generic succeeded: signed %v, ID %q (awaiting-approval's %q), body %v", ok[0].signed, ok[0].id, generic.id, ok[0].body)
	}
	if n := len(rcv.of("/down", "succeeded")); n < 2 {
		t.Errorf("the sink that is down got %d POSTs, want its retries", n)
	}
	if n := len(rcv.of("/down", "awaiting-approval")); n != 0 {
		t.Errorf("the sink that wants succeeded only got awaiting-approval %d times", n)
	}
	rel := e.release(1)
	got := deliveries(t, e.home, srv.info.Address, fmt.Sprint(rel["workflowID"]), runID)
	for _, s := range []string{"notify team-chat: awaiting-approval", "notify audit: awaiting-approval", "notify team-chat: succeeded", "notify audit: succeeded"} {
		if got[s] != "completed" {
			t.Errorf("history: %q is %q, want completed (all: %v)", s, got[s], got)
		}
	}
	if down := got["notify down: succeeded"]; !strings.Contains(down, "event sink down (http://127.0.0.1") || !strings.Contains(down, "500") {
		t.Errorf("history: the delivery to the sink that is down is %q, want failed with its 500 (all: %v)", down, got)
	}

	// Drift: the Slack sink gets drift-detected as a Slack message.
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Patch(context.Background(), "a", types.MergePatchType,
		[]byte(`{"data":{"k":"changed"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if r := e.run("drift", "check"); r.code != 2 {
		t.Fatalf("drift check: exit %d, want 2: %s", r.code, r)
	}
	drifted := rcv.waitFor("/slack", "drift-detected")
	if !strings.Contains(fmt.Sprint(drifted.body), "v1:ConfigMap:"+e.ns+":a") {
		t.Errorf("slack drift-detected does not name the drifted ConfigMap: %v", drifted.body)
	}
	if g := rcv.waitFor("/generic", "drift-detected"); !g.signed || g.body["drift"] == nil {
		t.Errorf("generic drift-detected: signed %v, body %v", g.signed, g.body)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.wait()
}

// TestRunEventsFailedAndCancelled: a failed apply tells the sinks its first
// error; an apply cancelled while it awaits approval tells them who
// cancelled it and why.
func TestRunEventsFailedAndCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := marker(t, "eventsecret")
	rcv := newEventReceiver(t, secret)
	e.environ = append(e.environ, "KUMO_WEBHOOK_TEST_SECRET="+secret)
	srv := e.startServer("--headless")
	e.ok("workspace", "update", "default", "--file", e.writeSpec("ws.yaml", rcv.sinksWorkspace()))

	// Two ConfigMaps in a namespace that does not exist fail, each with an
	// error of its own: the event carries the first.
	missing := e.ns + "-missing"
	if r := e.run("apply", "--yes", "-f", e.writeSpec("bad.yaml", "resources:\n"+configMap(missing, "a", "")+configMap(missing, "b", ""))); r.code == 0 {
		t.Fatalf("an apply into a missing namespace succeeded: %s", r)
	}
	failed := rcv.waitFor("/generic", "failed")
	msg, _ := failed.body["error"].(string)
	a, b := strings.Contains(msg, "v1:ConfigMap:"+missing+":a"), strings.Contains(msg, "v1:ConfigMap:"+missing+":b")
	if !failed.signed || a == b || !strings.Contains(msg, missing) || strings.Contains(msg, "\n") || strings.Count(msg, "revision 1 failed") > 1 {
		t.Errorf("generic failed: signed %v, error %q: want the first ConfigMap's error alone", failed.signed, msg)
	}
	if s := rcv.waitFor("/slack", "failed"); !strings.Contains(fmt.Sprint(s.body), missing) {
		t.Errorf("slack failed lacks the error: %v", s.body)
	}

	runID, wait := e.startAwaiting(2, "-f", e.approvalSpec("one"))
	rcv.waitFor("/generic", "awaiting-approval")
	e.ok("run", "cancel", runID, "--reason", "maintenance window")
	wait()
	cancelled := rcv.waitFor("/generic", "cancelled")
	who, _ := cancelled.body["cancelledBy"].(string)
	if who == "" || strings.Contains(who, "unknown") || cancelled.body["reason"] != "maintenance window" || cancelled.body["runID"] != runID {
		t.Errorf("generic cancelled: by %q, reason %v, run %v", who, cancelled.body["reason"], cancelled.body["runID"])
	}
	if s := rcv.waitFor("/slack", "cancelled"); !strings.Contains(fmt.Sprint(s.body), who) || !strings.Contains(fmt.Sprint(s.body), "maintenance window") {
		t.Errorf("slack cancelled lacks who and why: %v", s.body)
	}
	for _, path := range []string{"/slack", "/generic"} {
		if n := len(rcv.of(path, "succeeded")); n != 0 {
			t.Errorf("%s got succeeded %d times, want never", path, n)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.wait()
}

// TestEventsFileRefused: an operator's events file with a plain-http sink to
// another host than a loopback one stops kumo server and kumo worker before
// they start, naming the file and the field, not the URL's token.
func TestEventsFileRefused(t *testing.T) {
	t.Parallel()
	e := &env{t: t, home: t.TempDir(), project: "shop"}
	file := e.writeSpec("events.yaml", "sinks:\n- {name: ops, kind: slack, url: \"http://chat.example.com/hooks/t0ken\"}\n")
	for _, cmd := range [][]string{{"server", "--address", "127.0.0.1:0", "--headless"}, {"worker", "--temporal-address", "127.0.0.1:1"}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := e.commandNoCluster(ctx, append(cmd, "--events", file)...).CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "events.yaml: sinks[0] (ops).url: http to chat.example.com") || strings.Contains(string(out), "t0ken") {
			t.Errorf("kumo %s with a plain-http sink: %v: %s", cmd[0], err, out)
		}
	}
}
