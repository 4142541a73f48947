package release

import (
	"encoding/json"

	"github.com/kumoproj/kumo/engine/drift"
)

// DriftWebhook is what announces one drift event to a workspace's webhook:
// the event as JSON, with its name and its ID in headers (X-Kumo-Event,
// X-Kumo-Event-Id) so a receiver can route it and drop the repeat of a
// retried POST. Sending it is the caller's (activities POSTs it).
type DriftWebhook struct {
	URL string
	// Event names the event, for the sender's errors.
	Event  string
	Header map[string]string
	Body   []byte
}

// DriftWebhookOf is the announcement of e to the webhook at url.
func DriftWebhookOf(url string, e drift.Event) (DriftWebhook, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return DriftWebhook{}, err
	}
	return DriftWebhook{URL: url, Event: e.Event, Body: body, Header: map[string]string{
		"Content-Type":    "application/json",
		"X-Kumo-Event":    e.Event,
		"X-Kumo-Event-Id": e.ID(),
	}}, nil
}
