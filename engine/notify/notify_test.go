package notify

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/drift"
)

var at = time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)

var run = Run{WorkflowID: "kumo/shop/dev", RunID: "0198-run", Operation: "apply", Project: "shop", Workspace: "dev", Stack: "web", Revision: 4, StartedBy: "local:alice"}

func TestEventID(t *testing.T) {
	id := EventID("kumo/shop/dev", "r1", Succeeded)
	if id != EventID("kumo/shop/dev", "r1", Succeeded) {
		t.Fatal("the same run and kind got two IDs")
	}
	others := []string{
		EventID("kumo/shop/dev", "r1", Failed), EventID("kumo/shop/dev", "r2", Succeeded), EventID("kumo/shop/prod", "r1", Succeeded),
		// the parts are separated: moving a character from one to the next makes another ID
		EventID("kumo/shop/dev", "r", "1"+Succeeded),
	}
	for _, o := range others {
		if o == id {
			t.Errorf("two events share ID %s", id)
		}
	}
	if !strings.HasPrefix(id, "kumo-") || len(id) != len("kumo-")+32 {
		t.Errorf("ID %q: want kumo- and 32 hex digits", id)
	}
}

func TestRunEvents(t *testing.T) {
	p := Plan{Create: 2, Update: 1, Digest: "sha256:0123456789abcdef0123"}
	e := NewAwaitingApproval(run, p, at).WithApproveURL("https://kumo.example.com/")
	if e.ID != EventID(run.WorkflowID, run.RunID, AwaitingApproval) || e.Event != AwaitingApproval || e.Plan == nil || *e.Plan != p {
		t.Fatalf("awaiting-approval: %+v", e)
	}
	if want := "kumo approve 0198-run --project shop --workspace dev --digest sha256:0123456789abcdef0123"; e.Approve.Command != want {
		t.Errorf("approve command %q, want %q", e.Approve.Command, want)
	}
	if want := "https://kumo.example.com/api/v1/runs/0198-run/approve"; e.Approve.URL != want {
		t.Errorf("approve URL %q, want %q", e.Approve.URL, want)
	}
	if want := "apply shop/dev revision 4 awaits approval: 2 to create, 1 to update, 0 to delete (plan sha256:0123456789ab)"; e.Summary != want {
		t.Errorf("summary %q, want %q", e.Summary, want)
	}
	if NewAwaitingApproval(run, p, at).Approve.URL != "" {
		t.Error("an approve URL without an API URL")
	}

	f := NewFailed(run, "apply failed for 2 resources:\n  v1:ConfigMap:x:a: forbidden\n  v1:ConfigMap:x:b: forbidden", nil, at)
	if f.Error != "apply failed for 2 resources: v1:ConfigMap:x:a: forbidden" {
		t.Errorf("first error %q", f.Error)
	}
	c := NewCancelled(run, "local:bob", "wrong branch", at)
	if c.CancelledBy != "local:bob" || c.Reason != "wrong branch" || c.Summary != "apply shop/dev revision 4 was cancelled by local:bob: wrong branch" {
		t.Errorf("cancelled: %+v", c)
	}
	if s := NewSucceeded(run, &p, at); s.Summary != "apply shop/dev revision 4 succeeded: 2 created, 1 updated, 0 deleted" {
		t.Errorf("succeeded summary %q", s.Summary)
	}
}

func TestFirstError(t *testing.T) {
	for in, want := range map[string]string{
		"boom":                            "boom",
		"revision 3 failed: x\nmore":      "revision 3 failed: x",
		"preview failed for 3:\n  a\n  b": "preview failed for 3: a",
		strings.Repeat("é", 2000):         strings.Repeat("é", (maxError-3)/2) + "…",
	} {
		if got := FirstError(in); got != want {
			t.Errorf("FirstError(%.40q) = %.60q, want %.60q", in, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"https://hooks.slack.com/services/T/B/X", "http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]:9/x"} {
		if err := CheckURL(ok, false); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "http://hooks.example.com/t0ken", "ftp://x/t0ken", "hooks.example.com/t0ken", "https:///t0ken", "mailto:t0ken@x"} {
		err := CheckURL(bad, false)
		if err == nil {
			t.Errorf("%q allowed", bad)
			continue
		}
		if strings.Contains(err.Error(), "t0ken") {
			t.Errorf("the error repeats the URL's token: %v", err)
		}
	}
	if err := CheckURL("http://hooks.example.com/x", true); err != nil {
		t.Errorf("http with the operator's allowance refused: %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := Config{Sinks: []Sink{
		{Name: "chat", Kind: KindSlack, URL: "https://hooks.slack.com/services/T/B/X"},
		{Name: "audit", Kind: KindWebhook, URL: "https://e.example.com", SecretEnv: "KUMO_WEBHOOK_AUDIT", Events: []string{Failed, drift.EventDetected}},
	}}
	if err := good.Validate("notifications.", false); err != nil {
		t.Fatal(err)
	}
	for want, c := range map[string]Config{
		`notifications.sinks[0] (chat).url: http to hooks.example.com`:  {Sinks: []Sink{{Name: "chat", Kind: KindSlack, URL: "http://hooks.example.com/x"}}},
		`notifications.sinks[0] (audit).secretEnv: missing`:             {Sinks: []Sink{{Name: "audit", Kind: KindWebhook, URL: "https://e.example.com"}}},
		`notifications.sinks[0] (a).secretEnv: "AWS_SECRET_ACCESS_KEY"`: {Sinks: []Sink{{Name: "a", Kind: KindWebhook, URL: "https://e.example.com", SecretEnv: "AWS_SECRET_ACCESS_KEY"}}},
		`notifications.sinks[0] (a).kind: "teams"`:                      {Sinks: []Sink{{Name: "a", Kind: "teams", URL: "https://e.example.com"}}},
		`notifications.sinks[0] (a).kind: missing`:                      {Sinks: []Sink{{Name: "a", URL: "https://e.example.com"}}},
		`notifications.sinks[0].name: ""`:                               {Sinks: []Sink{{Kind: KindSlack, URL: "https://e.example.com"}}},
		`notifications.sinks[0] (a).events[0]: "done"`:                  {Sinks: []Sink{{Name: "a", Kind: KindSlack, URL: "https://e.example.com", Events: []string{"done"}}}},
		`notifications.sinks[1] (a).name: "a" names two sinks`:          {Sinks: []Sink{{Name: "a", Kind: KindSlack, URL: "https://e.example.com"}, {Name: "a", Kind: KindSlack, URL: "https://f.example.com"}}},
	} {
		err := c.Validate("notifications.", false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
	if err := (Operator{APIURL: "http://kumo.example.com"}).Validate("events.yaml"); err == nil || !strings.Contains(err.Error(), "events.yaml: apiURL: http to kumo.example.com") {
		t.Errorf("operator's http API URL: %v", err)
	}
}

func TestWants(t *testing.T) {
	if !(Sink{}).Wants(Failed) || !(Sink{Events: []string{Failed}}).Wants(Failed) || (Sink{Events: []string{Failed}}).Wants(Succeeded) {
		t.Error("Wants: empty takes all, a list only its own")
	}
}

func TestRenderWebhook(t *testing.T) {
	e := NewFailed(run, "boom", nil, at)
	m, err := Render(KindWebhook, e)
	if err != nil {
		t.Fatal(err)
	}
	var got Event
	if err := json.Unmarshal(m.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != e.ID || got.Event != Failed || got.Error != "boom" || m.Header[HeaderEventID] != e.ID || m.Header[HeaderEvent] != Failed {
		t.Errorf("body %s, headers %v", m.Body, m.Header)
	}
	m.Sign([]byte("k"), at)
	if m.Header[HeaderTimestamp] != "1795640400" || m.Header[HeaderSignature] != "sha256="+Signature([]byte("k"), "1795640400", m.Body) {
		t.Errorf("signature headers %v", m.Header)
	}
}

// checkSlack checks body against Slack's documented incoming-webhook shape:
// a JSON object with a non-empty text; blocks, if any, an array of objects
// each of a Block Kit type, whose text objects are mrkdwn or plain_text
// (plain_text only in a header).
func checkSlack(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	if s, _ := msg["text"].(string); s == "" {
		t.Errorf("no text: %s", body)
	}
	blocks, _ := msg["blocks"].([]any)
	for i, b := range blocks {
		block, _ := b.(map[string]any)
		typ, _ := block["type"].(string)
		if !slices.Contains([]string{"section", "header", "context", "divider", "actions", "image"}, typ) {
			t.Errorf("blocks[%d]: type %q", i, typ)
		}
		var texts []any
		if tx, ok := block["text"]; ok {
			texts = append(texts, tx)
		}
		if f, ok := block["fields"].([]any); ok {
			texts = append(texts, f...)
		}
		if el, ok := block["elements"].([]any); ok {
			texts = append(texts, el...)
		}
		for _, tx := range texts {
			o, _ := tx.(map[string]any)
			tt, _ := o["type"].(string)
			if tt != "mrkdwn" && tt != "plain_text" || (typ == "header" && tt != "plain_text") {
				t.Errorf("blocks[%d] (%s): text object of type %q", i, typ, tt)
			}
			if s, _ := o["text"].(string); s == "" {
				t.Errorf("blocks[%d] (%s): empty text", i, typ)
			}
		}
	}
	return msg
}

func TestRenderSlack(t *testing.T) {
	p := Plan{Create: 1, Digest: "sha256:0123456789abcdef0123"}
	dr := drift.Event{Event: drift.EventDetected, Project: "shop", Workspace: "dev", Check: "c1", CheckTime: at, Summary: "1 of 3 drifted",
		Resources: []drift.EventResource{{ID: "v1:ConfigMap:x:<!channel>", Status: drift.Drifted}}}
	for _, e := range []Event{
		NewAwaitingApproval(run, p, at).WithApproveURL("https://kumo.example.com"),
		NewSucceeded(run, &p, at),
		NewFailed(run, "x <!channel> & y", nil, at),
		NewCancelled(run, "", "", at),
		FromDrift("kumo-drift/shop/dev/default", "c1", dr),
	} {
		m, err := Render(KindSlack, e)
		if err != nil {
			t.Fatal(err)
		}
		msg := checkSlack(t, m.Body)
		if strings.Contains(string(m.Body), "<!channel>") {
			t.Errorf("%s: a name or error pings the channel: %s", e.Event, m.Body)
		}
		if !strings.Contains(string(m.Body), e.ID) || m.Header[HeaderEventID] != e.ID {
			t.Errorf("%s: the event ID is not in the body and the header", e.Event)
		}
		if _, ok := msg["id"]; ok {
			t.Errorf("%s: a Slack body carries kumo's fields", e.Event)
		}
	}
}
