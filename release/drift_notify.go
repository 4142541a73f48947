package release

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/notify"
	"github.com/kumoproj/kumo/runspec"
)

// Signature headers: a receiver recomputes HMAC-SHA256(secret, timestamp +
// "." + body), compares it in constant time with the hex after "sha256=",
// and refuses a timestamp outside its window (a replayed POST).
const (
	HeaderTimestamp = notify.HeaderTimestamp
	HeaderSignature = notify.HeaderSignature
)

// DriftWebhook is what announces one drift event to a workspace's webhook:
// the event as JSON, with its name and its ID in headers (X-Kumo-Event,
// X-Kumo-Event-Id) so a receiver can route it and drop the repeat of a
// retried POST. Sending it is the caller's (activities POSTs it).
type DriftWebhook struct {
	Hook drift.Webhook
	// Event names the event, for the sender's errors.
	Event  string
	Header map[string]string
	Body   []byte
}

// DriftWebhookOf is the announcement of e to hook, unsigned (see Sign).
func DriftWebhookOf(hook drift.Webhook, e drift.Event) (DriftWebhook, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return DriftWebhook{}, err
	}
	return DriftWebhook{Hook: hook, Event: e.Event, Body: body, Header: map[string]string{
		"Content-Type":    "application/json",
		"X-Kumo-Event":    e.Event,
		"X-Kumo-Event-Id": e.ID(),
	}}, nil
}

// Sign sets the timestamp (Unix seconds at now) and signature headers. It
// is done per attempt, so a retried POST carries a fresh timestamp.
func (w DriftWebhook) Sign(secret []byte, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	w.Header[HeaderTimestamp] = ts
	w.Header[HeaderSignature] = "sha256=" + WebhookSignature(secret, ts, w.Body)
}

// WebhookSignature is the hex HMAC-SHA256 of timestamp + "." + body.
// Run events are signed the same way (notify.Signature).
func WebhookSignature(secret []byte, timestamp string, body []byte) string {
	return notify.Signature(secret, timestamp, body)
}

// ResolveDriftWebhook returns the webhook to POST e to: hook's URL in clear
// (a check's input carries it sealed, drift.Webhook.Sealed, for the event's
// project and workspace, so that no history holds it) and secret's variable,
// with what it may reach (allowedHosts, allowPrivate) as the workspace stored
// in the backend says, whatever the input says: whoever starts a check
// chooses its input. A URL that does not open is a refused webhook; no error
// holds the URL.
func (m *Manager) ResolveDriftWebhook(ctx context.Context, hook drift.Webhook, e drift.Event) (drift.Webhook, error) {
	ws, err := m.storedWorkspace(ctx, e.Workspace)
	if err != nil {
		return hook, err
	}
	allow := ws.Drift.Webhook
	hook.AllowedHosts, hook.AllowPrivate = allow.AllowedHosts, allow.AllowPrivate
	if hook.Sealed == "" {
		return hook, nil
	}
	url, err := m.backend.OpenText(e.Project, e.Workspace, runspec.DriftWebhookURL, hook.Sealed)
	if err != nil {
		return hook, kindErr(ErrInvalid, err)
	}
	hook.URL, hook.Sealed = url, ""
	return hook, nil
}
