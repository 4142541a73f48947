package notify

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine/drift"
)

// Kind is how a sink wants its events.
type Kind string

const (
	// KindWebhook is a generic webhook: the Event as JSON, signed with the
	// HMAC key the sink's secretEnv names (as drift webhooks are).
	KindWebhook Kind = "webhook"
	// KindSlack is a Slack-compatible incoming webhook: a message with
	// `text` and `blocks`. Its URL is its credential; it is signed too when
	// the sink names a secretEnv.
	KindSlack Kind = "slack"
)

// Config is a workspace's `notifications`, or the operator's event
// configuration file (see Operator): the sinks events go to.
//
//	notifications:
//	  sinks:
//	  - name: team-chat
//	    kind: slack
//	    url: https://hooks.slack.com/services/T000/B000/XXXX
//	  - name: audit
//	    kind: webhook
//	    url: https://events.example.com/kumo
//	    secretEnv: KUMO_WEBHOOK_AUDIT
//	    events: [succeeded, failed, cancelled]
type Config struct {
	Sinks []Sink `json:"sinks,omitempty"`
}

// Sink is one destination of events.
type Sink struct {
	// Name names the sink in the run's history ("notify team-chat:
	// succeeded") and in errors; unique among the sinks of one place.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// URL is where events are POSTed. It may hold a token (a Slack URL
	// does), so no error or history repeats it: only its scheme and host.
	URL string `json:"url"`
	// SecretEnv names the worker's environment variable holding the
	// HMAC-SHA256 key POSTs are signed with (drift.SecretEnvPrefix...):
	// required for a generic webhook, optional for Slack.
	SecretEnv string `json:"secretEnv,omitempty"`
	// Events are the event kinds the sink wants; empty: all of them.
	Events []string `json:"events,omitempty"`
	// AllowPrivate lets the worker dial a loopback, private or link-local
	// address for this sink (checked on the address dialled, as for drift
	// webhooks).
	AllowPrivate bool `json:"allowPrivate,omitempty"`
}

var sinkName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// Validate checks every sink; each error names the field
// (<prefix>sinks[i].url: prefix is "notifications." in a workspace file) and
// the sink. allowHTTP is the operator's allowance
// of plain http to hosts other than loopback ones (Operator.AllowHTTP).
func (c Config) Validate(prefix string, allowHTTP bool) error {
	var errs []error
	seen := map[string]bool{}
	for i, s := range c.Sinks {
		field := fmt.Sprintf("%ssinks[%d]", prefix, i)
		if s.Name != "" {
			field += " (" + s.Name + ")"
		}
		if err := s.Check(field, allowHTTP); err != nil {
			errs = append(errs, err)
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("%s.name: %q names two sinks", field, s.Name))
		}
		seen[s.Name] = true
	}
	return errors.Join(errs...)
}

// Check validates one sink; field names it in errors ("notifications.sinks[0]
// (team-chat)"). No error repeats the URL.
func (s Sink) Check(field string, allowHTTP bool) error {
	if !sinkName.MatchString(s.Name) {
		return fmt.Errorf("%s.name: %q is not a sink name (lower-case letters, digits and dashes)", field, s.Name)
	}
	switch s.Kind {
	case KindWebhook, KindSlack:
	case "":
		return fmt.Errorf("%s.kind: missing: want %q or %q", field, KindWebhook, KindSlack)
	default:
		return fmt.Errorf("%s.kind: %q is not a sink kind: want %q or %q", field, s.Kind, KindWebhook, KindSlack)
	}
	if err := CheckURL(s.URL, allowHTTP); err != nil {
		return fmt.Errorf("%s.url: %w", field, err)
	}
	switch {
	case s.SecretEnv == "" && s.Kind == KindWebhook:
		return fmt.Errorf("%s.secretEnv: missing: kumo signs every generic webhook POST, with the key in the worker variable this names (%s...)", field, drift.SecretEnvPrefix)
	case s.SecretEnv != "" && (!strings.HasPrefix(s.SecretEnv, drift.SecretEnvPrefix) || !envName.MatchString(s.SecretEnv)):
		return fmt.Errorf("%s.secretEnv: %q is not an environment variable name starting with %s", field, s.SecretEnv, drift.SecretEnvPrefix)
	}
	for j, e := range s.Events {
		if !slices.Contains(Kinds, e) {
			return fmt.Errorf("%s.events[%d]: %q is not an event: want one of %s", field, j, e, strings.Join(Kinds, ", "))
		}
	}
	return nil
}

// CheckURL allows https, and http only to a loopback host (localhost,
// 127.0.0.0/8, ::1) unless allowHTTP: an event may carry a plan's summary
// and its errors, which plain http shows to every network on the way. The
// error never repeats the URL.
func CheckURL(raw string, allowHTTP bool) error {
	if raw == "" {
		return errors.New("missing")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("not an absolute http(s) URL") // url.Parse's error repeats the URL
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if allowHTTP || loopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("http to %s: plain http is allowed only to a loopback host (use https, or the operator allows http with allowHTTP)", u.Hostname())
	}
	return fmt.Errorf("scheme %q: want https (or http to a loopback host)", u.Scheme)
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// Wants reports whether the sink takes events of kind.
func (s Sink) Wants(kind string) bool {
	return len(s.Events) == 0 || slices.Contains(s.Events, kind)
}

// Operator is the worker operator's event configuration (`kumo worker
// --events FILE`, `kumo server --events FILE`): sinks every workspace's
// events also go to, whether plain http may reach other hosts than loopback
// ones, and where the HTTP API is served, for the approve link.
type Operator struct {
	Sinks     []Sink `json:"sinks,omitempty"`
	AllowHTTP bool   `json:"allowHTTP,omitempty"`
	// APIURL is the base URL of kumo's HTTP API (https://kumo.example.com),
	// when one serves it: awaiting-approval events then carry the approve
	// URL. Empty: the command only.
	APIURL string `json:"apiURL,omitempty"`
}

// Validate checks the operator's sinks and API URL; source names the file.
func (o Operator) Validate(source string) error {
	if err := (Config{Sinks: o.Sinks}).Validate(source+": ", o.AllowHTTP); err != nil {
		return err
	}
	if o.APIURL != "" {
		if err := CheckURL(o.APIURL, o.AllowHTTP); err != nil {
			return fmt.Errorf("%s: apiURL: %w", source, err)
		}
	}
	return nil
}

// OperatorPrefix starts the name of an operator's sink in a run's history,
// so it is never taken for a workspace's sink of the same name.
const OperatorPrefix = "operator/"
