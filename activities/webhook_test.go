package activities

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
)

const testSecretEnv = "KUMO_WEBHOOK_TEST_SECRET"

// localHook is a webhook to a loopback test server: it must be allowed
// explicitly, and signed with a secret from the worker's environment.
func localHook(t *testing.T, url string) drift.Webhook {
	t.Setenv(testSecretEnv, "s3cret")
	return drift.Webhook{URL: url, AllowPrivate: true, SecretEnv: testSecretEnv}
}

// notifier returns activities over a backend whose workspace "w" allows the
// destinations allow allows (allowedHosts, allowPrivate): the worker reads
// those there, never from the notice.
func notifier(t *testing.T, allow drift.Webhook) *Activities {
	t.Helper()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := &engine.Workspace{Name: "w", Drift: drift.Config{Webhook: drift.Webhook{
		URL: "https://hooks.example.com/x", AllowedHosts: allow.AllowedHosts, AllowPrivate: allow.AllowPrivate}}}
	if err := b.PutWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return New(b, nil, nil)
}

// verify is the receiver side of a signature, as docs/secrets.md shows it.
func verify(secret string, r *http.Request, body []byte) bool {
	ts := r.Header.Get(release.HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	want := "sha256=" + release.WebhookSignature([]byte(secret), ts, body)
	return hmac.Equal([]byte(r.Header.Get(release.HeaderSignature)), []byte(want))
}

// TestNotifyDriftPostsTheEvent: the event is POSTed as JSON with its name and
// ID in headers; an answer other than 2xx is an error naming the hook (scheme
// and host), the answer and the event.
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
	h := localHook(t, hook.URL)
	a := notifier(t, h)
	if err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: h, Event: e}); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.event != e.Event || got.id != e.ID() ||
		got.contentType != "application/json" || got.userAgent != "kumo" || got.body.Project != "p" {
		t.Errorf("request %+v", got)
	}
	status = http.StatusBadGateway
	err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: h, Event: e})
	if want := "drift webhook " + hook.URL + ": answered 502 Bad Gateway to drift.detected"; err == nil || err.Error() != want {
		t.Errorf("answered 502: %v, want %q", err, want)
	}
	h.URL = "http://\x7f"
	if err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: h, Event: e}); err == nil || !strings.HasPrefix(err.Error(), "drift webhook ") {
		t.Errorf("a bad URL: %v", err)
	}
}

// TestNotifyDriftRefusesDestinations: a loopback receiver without
// allowPrivate, a host outside allowedHosts and a redirect (even to the same
// host) are refused, each naming the host; nothing reaches the receiver.
func TestNotifyDriftRefusesDestinations(t *testing.T) {
	posts := 0
	var srvURL string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, srvURL+"/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		posts++
	}))
	defer hook.Close()
	srvURL = hook.URL
	e := drift.Event{Event: "drift-detected", Workspace: "w", Check: "c"}
	for name, c := range map[string]struct {
		hook drift.Webhook
		want string
	}{
		"loopback":            {drift.Webhook{URL: hook.URL}, "127.0.0.1 resolves to 127.0.0.1, a loopback address"},
		"localhost by name":   {drift.Webhook{URL: strings.Replace(hook.URL, "127.0.0.1", "localhost", 1)}, "a loopback address"},
		"not an allowed host": {drift.Webhook{URL: hook.URL, AllowPrivate: true, AllowedHosts: []string{"hooks.example.com"}}, "host 127.0.0.1 is not in drift.webhook.allowedHosts"},
		"redirect":            {drift.Webhook{URL: hook.URL + "/redirect", AllowPrivate: true}, "refused: 127.0.0.1 redirected the POST to 127.0.0.1; kumo follows no redirect"},
	} {
		a := notifier(t, c.hook)
		// The notice asks for everything: only the stored workspace counts.
		h := localHook(t, c.hook.URL)
		err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: h, Event: e})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if posts != 0 {
		t.Errorf("%d POSTs reached the receiver", posts)
	}
}

// TestNotifyDriftSigns: the receiver verifies the signature over timestamp
// and body; a tampered body, or another secret, fails verification. Without
// a secret nothing is sent.
func TestNotifyDriftSigns(t *testing.T) {
	var verified, tampered, wrongKey bool
	posts := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts++
		body, _ := io.ReadAll(r.Body)
		verified = verify("s3cret", r, body)
		tampered = verify("s3cret", r, append(body, ' '))
		wrongKey = verify("other", r, body)
	}))
	defer hook.Close()
	e := drift.Event{Event: "drift-detected", Project: "p", Workspace: "w", Check: "c"}
	a := notifier(t, drift.Webhook{AllowPrivate: true})
	if err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: localHook(t, hook.URL), Event: e}); err != nil {
		t.Fatal(err)
	}
	if !verified || tampered || wrongKey {
		t.Errorf("verified %v, tampered body verified %v, other key verified %v", verified, tampered, wrongKey)
	}
	for name, h := range map[string]drift.Webhook{
		"no secretEnv":           {URL: hook.URL, AllowPrivate: true},
		"unset variable":         {URL: hook.URL, AllowPrivate: true, SecretEnv: "KUMO_WEBHOOK_UNSET_IN_TEST"},
		"not a webhook variable": {URL: hook.URL, AllowPrivate: true, SecretEnv: "HOME"},
		"an old notice":          {},
	} {
		in := runspec.DriftNotice{Webhook: h, Event: e}
		if h.URL == "" {
			in.URL = hook.URL
		}
		if err := a.NotifyDrift(context.Background(), in); err == nil || !strings.Contains(err.Error(), "secretEnv") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if posts != 1 {
		t.Errorf("%d POSTs, want 1 (none unsigned)", posts)
	}
}

// TestNotifyDriftRedactsTheURL: errors name the webhook by scheme and host;
// a token in its path, query or user info appears in none.
func TestNotifyDriftRedactsTheURL(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer hook.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	const token = "tok3n-abc"
	a := notifier(t, drift.Webhook{AllowPrivate: true})
	for _, base := range []string{hook.URL, closed.URL} {
		for _, raw := range []string{
			base + "/hooks/" + token,
			base + "/hooks?token=" + token,
			strings.Replace(base, "http://", "http://user:"+token+"@", 1) + "/x",
		} {
			err := a.NotifyDrift(context.Background(), runspec.DriftNotice{Webhook: localHook(t, raw), Event: drift.Event{Event: "drift-detected", Workspace: "w"}})
			if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "drift webhook "+base) {
				t.Errorf("%s: %v", raw, err)
			}
		}
	}
}
