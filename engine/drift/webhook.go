package drift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Webhook is `drift.webhook`: where drift events are POSTed and what the
// workspace allows that destination to be. It is written either as a plain
// URL (the old form, still accepted) or as an object:
//
//	webhook:
//	  url: https://hooks.example.com/kumo
//	  secretEnv: KUMO_WEBHOOK_SECRET       # the worker's env var holding the HMAC key
//	  allowedHosts: [hooks.example.com, "*.internal.example"]
//	  allowPrivate: false                  # loopback, private and link-local addresses
//
// The secret itself never leaves the worker's environment, so it is in no
// workspace file, workflow input or history.
type Webhook struct {
	URL string `json:"url,omitempty"`
	// Sealed is URL sealed for the worker (backend.SealText), in place of
	// URL in a check's input: a URL may hold a token, and workflow inputs
	// are in history, which whoever holds the codec key can decode.
	Sealed string `json:"sealed,omitempty"`
	// SecretEnv names the worker environment variable holding the HMAC-SHA256
	// key every POST is signed with. It must start with SecretEnvPrefix, so a
	// workspace cannot make the worker key signatures with an unrelated
	// credential of its environment.
	SecretEnv string `json:"secretEnv,omitempty"`
	// AllowedHosts, when set, are the only hosts (globs: "*.example.com")
	// the URL may name.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// AllowPrivate lets the worker dial loopback, private (RFC 1918, ULA,
	// CGNAT), link-local and unspecified addresses; without it they are
	// refused on the address actually dialled.
	AllowPrivate bool `json:"allowPrivate,omitempty"`
}

// SecretEnvPrefix starts every environment variable a webhook secret may be read from.
const SecretEnvPrefix = "KUMO_WEBHOOK_"

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// UnmarshalJSON reads a plain URL string or the object form; unknown keys
// of the object are an error, so a misspelt allow is not silently dropped.
func (w *Webhook) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*w = Webhook{URL: s}
		return nil
	}
	type plain Webhook
	var p plain
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return fmt.Errorf("want a URL or {url, secretEnv, allowedHosts, allowPrivate}: %w", err)
	}
	*w = Webhook(p)
	return nil
}

// IsZero reports an unset webhook (for omitzero).
func (w Webhook) IsZero() bool {
	return w.URL == "" && w.Sealed == "" && w.SecretEnv == "" && len(w.AllowedHosts) == 0 && !w.AllowPrivate
}

// validate checks the URL, the secret's variable name and the host globs;
// no error repeats the URL (it may hold a token).
func (w Webhook) validate() error {
	if w.IsZero() {
		return nil
	}
	if w.URL == "" && w.Sealed == "" {
		return errors.New("url: missing")
	}
	if w.URL != "" {
		p, err := url.Parse(w.URL)
		if err != nil {
			// url.Parse's error repeats the URL, which may hold a token.
			return errors.New("url: not a valid URL")
		}
		if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return errors.New("url: want an http:// or https:// URL")
		}
	}
	if w.SecretEnv != "" && (!strings.HasPrefix(w.SecretEnv, SecretEnvPrefix) || !envName.MatchString(w.SecretEnv)) {
		return fmt.Errorf("secretEnv: %q is not an environment variable name starting with %s", w.SecretEnv, SecretEnvPrefix)
	}
	for i, h := range w.AllowedHosts {
		if _, err := path.Match(h, ""); err != nil || h == "" {
			return fmt.Errorf("allowedHosts[%d]: %q is not a valid host glob", i, h)
		}
	}
	if w.URL == "" {
		return nil // sealed: the worker checks the host once it opened it
	}
	return w.HostAllowed()
}

// HostAllowed checks the URL's host against AllowedHosts (when set). The
// error names the host only.
func (w Webhook) HostAllowed() error {
	if len(w.AllowedHosts) == 0 {
		return nil
	}
	p, err := url.Parse(w.URL)
	if err != nil {
		return errors.New("url: not a valid URL")
	}
	host := strings.ToLower(p.Hostname())
	for _, h := range w.AllowedHosts {
		if ok, _ := path.Match(strings.ToLower(h), host); ok {
			return nil
		}
	}
	return fmt.Errorf("host %s is not in drift.webhook.allowedHosts", host)
}

// PrivateAddr says why a is an address a webhook may not reach without
// AllowPrivate ("" when it is a public one).
func PrivateAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate(), cgnat.Contains(a):
		return "private"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast():
		return "multicast"
	}
	return ""
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")
