package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/release"
)

// webhookTimeout bounds one POST: a slow receiver is retried, not waited on.
const webhookTimeout = 10 * time.Second

// errWebhookRefused marks a POST kumo will not send (a destination or a
// secret the workspace does not allow): retrying cannot change that.
var errWebhookRefused = errors.New("refused")

// postDriftWebhook signs and POSTs what release.DriftWebhookOf says to send.
// Any answer but 2xx is an error. Every error names the webhook by scheme and
// host only: the URL's path, query and user info (where tokens live) never
// reach the error, which Temporal keeps in history unencrypted.
func postDriftWebhook(ctx context.Context, w release.DriftWebhook, now time.Time) error {
	err := sendDriftWebhook(ctx, w, now)
	if err == nil {
		return nil
	}
	msg := scrubURL(w.Hook.URL, fmt.Sprintf("drift webhook %s: %v", redactURL(w.Hook.URL), err))
	if errors.Is(err, errWebhookRefused) {
		return temporal.NewNonRetryableApplicationError(msg, "WebhookRefused", nil)
	}
	return errors.New(msg)
}

func sendDriftWebhook(ctx context.Context, w release.DriftWebhook, now time.Time) error {
	u, err := url.Parse(w.Hook.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: not an http(s) URL", errWebhookRefused)
	}
	if err := w.Hook.HostAllowed(); err != nil {
		return fmt.Errorf("%w: %v", errWebhookRefused, err)
	}
	secret, err := webhookSecret(w.Hook)
	if err != nil {
		return fmt.Errorf("%w: %v", errWebhookRefused, err)
	}
	w.Sign(secret, now)
	return postWebhook(ctx, w.Hook.URL, w.Hook.AllowPrivate, "drift.webhook.allowPrivate in the workspace", w.Header, w.Body, w.Event)
}

// postWebhook POSTs body with header to rawURL (which the caller checked),
// through webhookClient: no redirect, no proxy, no private address unless
// allowPrivate (allowHint says where that is allowed). Any answer but 2xx is an error; event names the POST in it.
// Errors may still hold parts of the URL: the caller scrubs them.
func postWebhook(ctx context.Context, rawURL string, allowPrivate bool, allowHint string, header map[string]string, body []byte, event string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: not an http(s) URL", errWebhookRefused)
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: not a valid request URL", errWebhookRefused)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "kumo")
	resp, err := webhookClient(u.Hostname(), allowPrivate, allowHint).Do(req)
	if err != nil {
		// *url.Error repeats the URL (or a redirect's): keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, errWebhookRefused) {
			return err
		}
		return fmt.Errorf("%s: %w", event, err)
	}
	defer resp.Body.Close()
	// Read (a bounded part of) the answer before closing the connection.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s to %s", resp.Status, event)
	}
	return nil
}

// webhookSecret reads the signing key from the worker variable the
// workspace names. No secret, no POST: an unsigned notice could be forged by
// anyone who learns the URL, so kumo sends none.
func webhookSecret(h drift.Webhook) ([]byte, error) {
	if h.SecretEnv == "" {
		return nil, errors.New("drift.webhook.secretEnv is not set: kumo signs every webhook POST (see docs/secrets.md)")
	}
	if !strings.HasPrefix(h.SecretEnv, drift.SecretEnvPrefix) {
		return nil, fmt.Errorf("drift.webhook.secretEnv %s does not start with %s", h.SecretEnv, drift.SecretEnvPrefix)
	}
	s := os.Getenv(h.SecretEnv)
	if s == "" {
		return nil, fmt.Errorf("the worker's %s (drift.webhook.secretEnv) is unset or empty", h.SecretEnv)
	}
	return []byte(s), nil
}

// webhookClient follows no redirect (a receiver could send the POST, and its
// signature, elsewhere) and dials no proxy; without allowPrivate it refuses to
// connect to a loopback, private or link-local address. The check is on the
// address actually dialled, after DNS, so a name that resolves (or rebinds)
// to an internal address is caught. Its transport serves one POST and keeps
// no connection: an idle one would outlive the client, held open forever.
func webhookClient(host string, allowPrivate bool, allowHint string) *http.Client {
	dialer := &net.Dialer{Timeout: webhookTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		if allowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: cannot check the address dialled for %s", errWebhookRefused, host)
		}
		if why := drift.PrivateAddr(ap.Addr()); why != "" {
			return fmt.Errorf("%w: %s resolves to %s, a %s address (allow it with %s)", errWebhookRefused, host, ap.Addr(), why, allowHint)
		}
		return nil
	}}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true, DisableKeepAlives: true,
			TLSHandshakeTimeout: webhookTimeout, ResponseHeaderTimeout: webhookTimeout},
		CheckRedirect: func(r *http.Request, _ []*http.Request) error {
			return fmt.Errorf("%w: %s redirected the POST to %s; kumo follows no redirect", errWebhookRefused, host, r.URL.Hostname())
		},
	}
}

// redactURL is the scheme and host of raw: what an error may say about a
// webhook.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

// scrubURL removes from msg anything of raw beyond its scheme and host, in
// case an underlying error (a TLS or net error, say) repeated part of it.
func scrubURL(raw, msg string) string {
	msg = strings.ReplaceAll(msg, raw, redactURL(raw))
	u, err := url.Parse(raw)
	if err != nil {
		return msg
	}
	for _, part := range []string{u.RequestURI(), u.EscapedPath(), u.RawQuery, u.Fragment, u.User.String()} {
		if len(part) > 1 {
			msg = strings.ReplaceAll(msg, part, "[redacted]")
		}
	}
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "[redacted]")
	}
	return msg
}
