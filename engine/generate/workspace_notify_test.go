package generate

import (
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/notify"
)

// TestParseWorkspaceNotifications: a workspace's event sinks are read from
// its file, and a bad one is an error naming the file, the field and the
// sink, never the URL's token.
func TestParseWorkspaceNotifications(t *testing.T) {
	ws, err := ParseWorkspace([]byte(`notifications:
  sinks:
  - {name: chat, kind: slack, url: "https://hooks.slack.com/services/T0/B0/t0k"}
  - {name: audit, kind: webhook, url: "http://127.0.0.1:9000/kumo", secretEnv: KUMO_WEBHOOK_AUDIT, allowPrivate: true, events: [failed]}
`), "dev.yaml", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if s := ws.Notifications.Sinks; len(s) != 2 || s[0].Kind != notify.KindSlack || !s[1].AllowPrivate || s[1].Wants(notify.Succeeded) {
		t.Errorf("sinks: %+v", s)
	}
	for doc, want := range map[string]string{
		"notifications:\n  sinks:\n  - {name: chat, kind: slack, url: \"http://hooks.example.com/t0k\"}\n":     "dev.yaml: notifications.sinks[0] (chat).url: http to hooks.example.com",
		"notifications:\n  sinks:\n  - {name: chat, kind: webhook, url: \"https://hooks.example.com/t0k\"}\n":  "dev.yaml: notifications.sinks[0] (chat).secretEnv: missing",
		"notifications:\n  sinks:\n  - {name: chat, kind: slack, url: \"https://h.example/t0k\", evnts: []}\n": `unknown field "evnts"`,
	} {
		_, err := ParseWorkspace([]byte(doc), "dev.yaml", "dev")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "t0k") {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}

// TestParseEvents: the operator's events file is read, checked with its own
// allowHTTP, and an error names the file and the field.
func TestParseEvents(t *testing.T) {
	o, err := ParseEvents([]byte("allowHTTP: true\napiURL: http://kumo.internal:8080\nsinks:\n- {name: ops, kind: slack, url: \"http://chat.internal/hook\"}\n"), "events.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !o.AllowHTTP || o.APIURL != "http://kumo.internal:8080" || len(o.Sinks) != 1 || o.Sinks[0].Name != "ops" {
		t.Errorf("operator %+v", o)
	}
	for doc, want := range map[string]string{
		"sinks:\n- {name: ops, kind: slack, url: \"http://chat.internal/t0k\"}\n": "events.yaml: sinks[0] (ops).url: http to chat.internal",
		"sink: []\n": `unknown field "sink"`,
	} {
		_, err := ParseEvents([]byte(doc), "events.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "t0k") {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}
