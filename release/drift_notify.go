package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kumoproj/kumo/engine/drift"
)

// webhookTimeout bounds one POST: a slow receiver is retried, not waited on.
const webhookTimeout = 10 * time.Second

// PostDriftEvent POSTs e as JSON to url, with its ID in X-Kumo-Event-Id so a
// receiver can drop the repeat of a retried POST. Any answer but 2xx is an
// error.
func PostDriftEvent(ctx context.Context, url string, e drift.Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("drift webhook %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kumo")
	req.Header.Set("X-Kumo-Event", e.Event)
	req.Header.Set("X-Kumo-Event-Id", e.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("drift webhook %s: %w", url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("drift webhook %s answered %s to %s", url, resp.Status, e.Event)
	}
	return nil
}
