package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/notify"
)

func TestNoneMatch(t *testing.T) {
	tag := etagOf([]byte(`{"a":1}`), "application/json")
	if tag == etagOf([]byte(`{"a":2}`), "application/json") || tag == etagOf([]byte(`{"a":1}`), "application/yaml") {
		t.Fatal("another body or type has the same ETag")
	}
	for header, want := range map[string]bool{
		"": false, "*": true, tag: true, "W/" + tag: true, `"x", ` + tag: true, `"x"`: false, strings.Trim(tag, `"`): false,
	} {
		if got := noneMatch(header, tag); got != want {
			t.Errorf("noneMatch(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestPageToken(t *testing.T) {
	f := filterPrint("runs", "shop", "dev")
	if f == filterPrint("runs", "shop", "prod") || f == filterPrint("runs", "shopdev", "") {
		t.Fatal("other filters have the same fingerprint")
	}
	tok := pageToken{Filter: f, Next: []byte{1, 2, 3}}.encode()
	got, err := decodePageToken(tok, f)
	if err != nil || string(got.Next) != "\x01\x02\x03" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if _, err := decodePageToken(tok, filterPrint("runs", "shop", "prod")); !errors.Is(err, errBadPageToken) || !strings.Contains(err.Error(), "other filters") {
		t.Errorf("a token with other filters: %v", err)
	}
	for _, bad := range []string{"!!", "e30x", pageToken{Filter: f, Offset: -1}.encode()} {
		if _, err := decodePageToken(bad, f); !errors.Is(err, errBadPageToken) {
			t.Errorf("token %q: %v, want refused", bad, err)
		}
	}
	items := []int{0, 1, 2, 3, 4}
	page, next := offsetPage(items, pageToken{Filter: f}, 2)
	var all []int
	for {
		all = append(all, page...)
		if next == "" {
			break
		}
		tok, err := decodePageToken(next, f)
		if err != nil {
			t.Fatal(err)
		}
		page, next = offsetPage(items, tok, 2)
	}
	if fmt.Sprint(all) != fmt.Sprint(items) {
		t.Errorf("pages gave %v, want %v", all, items)
	}
	for s, ok := range map[string]bool{"": true, "1": true, "500": true, "0": false, "501": false, "x": false} {
		if _, err := parseLimit(s); (err == nil) != ok {
			t.Errorf("parseLimit(%q): %v", s, err)
		}
	}
}

func TestParseRunRequest(t *testing.T) {
	spec := `"resources: [{id: v1:ConfigMap:default:c, type: Kubernetes, attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}}]"`
	o, err := parseRunRequest([]byte(`{"operation":"apply","project":"shop","workspace":"dev","spec":` + spec + `,"approval":"auto","timeout":"90s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.spec.Resources) != 1 || o.Parallelism != defaultParallelism || o.timeout.Seconds() != 90 || o.approvalTimeout != defaultApprovalTimeout {
		t.Errorf("parsed %+v", o)
	}
	// Spacing and field order do not change the fingerprint; a value does.
	o2, err := parseRunRequest([]byte(`{ "timeout":"90s", "approval":"auto","spec":` + spec + `, "workspace":"dev","project":"shop","operation":"apply" }`))
	if err != nil || o2.fingerprint() != o.fingerprint() {
		t.Errorf("the same request reordered: %v, fingerprints differ: %v", err, o2.fingerprint() != o.fingerprint())
	}
	o4, err := parseRunRequest([]byte(`{"operation":"apply","project":"shop","workspace":"dev","spec":` + spec + `,"approval":"auto","timeout":"90s","targets":["ConfigMap/c"]}`))
	if err != nil || o4.fingerprint() == o.fingerprint() || o4.Targets[0] != "ConfigMap/c" {
		t.Errorf("a targeted request: %v; its fingerprint must differ from the untargeted one's", err)
	}
	o3, _ := parseRunRequest([]byte(`{"operation":"apply","project":"shop","workspace":"prod","spec":` + spec + `,"approval":"auto","timeout":"90s"}`))
	if o3.fingerprint() == o.fingerprint() {
		t.Error("another workspace has the same fingerprint")
	}
	// Naming no spec, stack or source: the workspace's default source.
	if o, err := parseRunRequest([]byte(`{"operation":"preview","project":"p","workspace":"w","commit":"` + strings.Repeat("a", 40) + `"}`)); err != nil || o.Source != "" {
		t.Errorf("a preview of the workspace's default source: %+v, %v", o, err)
	}
	for body, want := range map[string]string{
		`{"operation":"deploy","project":"p","workspace":"w"}`:                                              "operation \"deploy\"",
		`{"operation":"destroy","workspace":"w"}`:                                                           "project: required",
		`{"operation":"destroy","project":"p","workspace":"w","spec":{}}`:                                   "spec: a destroy run does not take it",
		`{"operation":"preview","project":"p","workspace":"w","stackDir":"/s","commit":"x"}`:                "commit: pins the commit of a git source",
		`{"operation":"preview","project":"p","workspace":"w","spec":"x","stackDir":"/s"}`:                  "spec, stackDir",
		`{"operation":"generate","project":"p","workspace":"w"}`:                                            "stackDir",
		`{"operation":"destroy","project":"p","workspace":"w","approval":"maybe"}`:                          "approval \"maybe\"",
		`{"operation":"apply","project":"p","workspace":"w","stackDir":"/s","timeout":"-1s"}`:               "timeout \"-1s\"",
		`{"operation":"destroy","project":"p","workspace":"w","colour":"red"}`:                              "unknown field \"colour\"",
		`{"operation":"apply","project":"p","workspace":"w","spec":"resources: [{id: x}]"}`:                 "spec",
		`{"operation":"destroy","project":"p","workspace":"w","targets":["web"]}`:                           "targets[0]: --target \"web\"",
		`{"operation":"rollback","project":"p","workspace":"w","targets":["Deployment/web"]}`:               "targets: a rollback run does not take it",
		`{"operation":"destroy","project":"p","workspace":"w","targetDependents":true}`:                     "targetDependents: needs targets",
		`{"operation":"preview","project":"p","workspace":"w","stackDir":"/s","allowProtectedDelete":true}`: "allowProtectedDelete: a preview run does not take it",
		`{"operation":"apply","project":"p","workspace":"w","stackDir":"/s","version":"not a name"}`:        "version \"not a name\"",
		`{"operation":"rollback","project":"p","workspace":"w","version":"v1"}`:                             "version: a rollback run does not take it",
		`{"operation":"preview","project":"p","workspace":"w","stackDir":"/s","queue":true}`:                "queue: a preview run does not take it",
		`{"operation":"drift-check","project":"p","workspace":"w","queue":false}`:                           "queue: a drift-check run does not take it",
	} {
		if _, err := parseRunRequest([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", body, err, want)
		}
	}
}

func TestRequestKey(t *testing.T) {
	a, err := requestKey("token:ci", "k-1")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := requestKey("token:other", "k-1"); a == b {
		t.Error("two callers' keys share a record")
	}
	for _, bad := range []string{"", strings.Repeat("k", 256), "has space", "tab\t"} {
		if _, err := requestKey("s", bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

func TestRedactWorkspace(t *testing.T) {
	ws := &engine.Workspace{Name: "dev",
		Drift:         drift.Config{Webhook: drift.Webhook{URL: "https://hooks.example/kumo?token=t0k", Sealed: "sealed:abc", SecretEnv: "KUMO_WEBHOOK_DEV"}},
		Context:       map[string]any{"extra": []any{map[string]any{"slackURL": "https://hooks.example/x/n0pe"}, "kumo:sealed:xyz"}},
		Notifications: notify.Config{Sinks: []notify.Sink{{Name: "team-chat", Kind: "slack", URL: "https://hooks.slack.example/T0/B0/s3cr3t"}}},
	}
	out := redactWorkspace(ws)
	data, _ := json.Marshal(out)
	for _, secret := range []string{"t0k", "sealed:abc", "s3cr3t", "n0pe", "xyz"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("redacted workspace holds %q: %s", secret, data)
		}
	}
	hook := out["drift"].(map[string]any)["webhook"].(map[string]any)
	if hook["url"] != "https://hooks.example/"+redacted || hook["secretEnv"] != "KUMO_WEBHOOK_DEV" || out["name"] != "dev" {
		t.Errorf("redacted workspace: %s", data)
	}
	if ws.Drift.Webhook.URL != "https://hooks.example/kumo?token=t0k" {
		t.Error("the workspace itself was changed")
	}
	if got := redactURL("https://hooks.example"); got != "https://hooks.example" {
		t.Errorf("a URL with nothing secret: %q", got)
	}
}

func TestProblemOf(t *testing.T) {
	denied := authz.OwnerOnly("alice").Decide(authz.Subject{Name: "bob"}, authz.Apply, "shop", "prod")
	p := problemOf(fmt.Errorf("start: %w", denied))
	if p.Status != 403 || p.Type != ProblemForbidden || p.Subject != "bob" || p.Action != "apply" || p.Project != "shop" || p.Workspace != "prod" {
		t.Errorf("a denial: %+v", p)
	}
	for err, want := range map[error]ProblemType{
		fmt.Errorf("x: %w", client.ErrBusy):          ProblemBusy,
		fmt.Errorf("x: %w", client.ErrNoRun):         ProblemNotFound,
		fmt.Errorf("x: %w", client.ErrNotAnswerable): ProblemNotAnswerable,
		fmt.Errorf("x: %w", client.ErrRunEnded):      ProblemRunEnded,
		fmt.Errorf("x: %w", client.ErrRequestReused): ProblemIdempotencyReused,
		errors.New("something else"):                 ProblemInternal,
	} {
		if got := problemOf(err).Type; got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
	if got := problemOf(refused(errors.New("nothing to destroy"))).Type; got != ProblemRefused {
		t.Errorf("refused: %s", got)
	}
	rec := httptest.NewRecorder()
	newProblem(ProblemUnauthenticated, "no").write(rec, httptest.NewRequest("GET", "/api/v1/runs", nil))
	if rec.Code != 401 || rec.Header().Get("Content-Type") != "application/problem+json" || rec.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("401: %d %v", rec.Code, rec.Header())
	}
}

func TestSpecFormat(t *testing.T) {
	for accept, want := range map[string]string{
		"": "application/yaml", "*/*": "application/yaml", "application/json": "application/json",
		"application/yaml, application/json": "application/yaml", "text/html, application/json;q=0.5": "application/json",
	} {
		if got, err := specFormat(accept); err != nil || got != want {
			t.Errorf("Accept %q: %s %v, want %s", accept, got, err, want)
		}
	}
	if _, err := specFormat("text/html"); problemOf(err).Status != 406 {
		t.Errorf("Accept text/html: %v, want 406", err)
	}
}
