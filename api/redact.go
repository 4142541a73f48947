package api

import (
	"bytes"
	"net/url"

	"github.com/kumoproj/kumo/engine"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// redacted stands for a value the API never returns.
const redacted = "(redacted)"

// redactWorkspace is ws without its secrets: a webhook URL may hold a token
// (in its user info, path or query), so only its scheme and host are shown;
// a sealed one is left out. ws is not changed.
func redactWorkspace(ws *engine.Workspace) *engine.Workspace {
	out := *ws
	h := &out.Drift.Webhook
	h.URL = redactURL(h.URL)
	if h.Sealed != "" {
		h.Sealed = redacted
	}
	return &out
}

// redactURL keeps a URL's scheme and host, and marks the rest redacted.
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return redacted
	}
	if u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/" + redacted
}
