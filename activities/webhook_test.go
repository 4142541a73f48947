package activities

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// TestNotifyDriftPostsTheEvent: the event is POSTed as JSON with its name and
// ID in headers; an answer other than 2xx is an error naming the hook, the
// answer and the event.
func TestNotifyDriftPostsTheEvent(t *testing.T) {
	var got struct {
		method, event, id, contentType, userAgent string
		body                                      drift.Event
	}
	status := http.StatusNoContent
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.event, got.id = r.Method, r.Header.Get("X-Kumo-Event"), r.Header.Get("X-Kumo-Event-Id")
		got.contentType, got.userAgent = r.Header.Get("Content-Type"), r.Header.Get("User-Agent")
		if err := json.NewDecoder(r.Body).Decode(&got.body); err != nil {
			t.Error(err)
		}
		w.WriteHeader(status)
	}))
	defer hook.Close()
	e := drift.Event{Event: "drift.detected", Project: "p", Workspace: "w", Check: "check-1"}
	a := &Activities{}
	if err := a.NotifyDrift(context.Background(), runspec.DriftNotice{URL: hook.URL, Event: e}); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.event != e.Event || got.id != e.ID() ||
		got.contentType != "application/json" || got.userAgent != "kumo" || got.body.Project != "p" {
		t.Errorf("request %+v", got)
	}
	status = http.StatusBadGateway
	err := a.NotifyDrift(context.Background(), runspec.DriftNotice{URL: hook.URL, Event: e})
	if want := "drift webhook " + hook.URL + " answered 502 Bad Gateway to drift.detected"; err == nil || err.Error() != want {
		t.Errorf("answered 502: %v, want %q", err, want)
	}
	if err := a.NotifyDrift(context.Background(), runspec.DriftNotice{URL: "http://\x7f", Event: e}); err == nil || !strings.HasPrefix(err.Error(), "drift webhook ") {
		t.Errorf("a bad URL: %v", err)
	}
}
