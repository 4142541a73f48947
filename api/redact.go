package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// redacted stands for a value the API never returns.
const redacted = "(redacted)"

// redactWorkspace is ws as the API shows it, without secrets, whatever
// field holds them: every URL (a webhook's, a notification sink's) keeps
// only its scheme and host, since its user info, path or query may hold a
// token; every sealed value is left out. It walks the workspace's JSON, so
// a field added later is covered too. ws is not changed.
func redactWorkspace(ws *engine.Workspace) map[string]any {
	data, err := json.Marshal(ws)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		return map[string]any{"name": ws.Name}
	}
	redactTree(m)
	return m
}

func redactTree(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			s, isString := val.(string)
			lk := strings.ToLower(k)
			switch {
			case isString && (lk == "url" || strings.HasSuffix(lk, "url")):
				t[k] = redactURL(s)
			case isString && (lk == "sealed" || strings.HasPrefix(s, "kumo:sealed:")):
				t[k] = redacted
			default:
				redactTree(val)
			}
		}
	case []any:
		for i, val := range t {
			if s, ok := val.(string); ok && strings.HasPrefix(s, "kumo:sealed:") {
				t[i] = redacted
				continue
			}
			redactTree(val)
		}
	}
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
