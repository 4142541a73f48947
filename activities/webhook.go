package activities

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kumoproj/kumo/release"
)

// webhookTimeout bounds one POST: a slow receiver is retried, not waited on.
const webhookTimeout = 10 * time.Second

// postDriftWebhook POSTs what release.DriftWebhookOf says to send. Any answer
// but 2xx is an error.
func postDriftWebhook(ctx context.Context, w release.DriftWebhook) error {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(w.Body))
	if err != nil {
		return fmt.Errorf("drift webhook %s: %w", w.URL, err)
	}
	for k, v := range w.Header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "kumo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("drift webhook %s: %w", w.URL, err)
	}
	defer resp.Body.Close()
	// Read (a bounded part of) the answer so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("drift webhook %s answered %s to %s", w.URL, resp.Status, w.Event)
	}
	return nil
}
