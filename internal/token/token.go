package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Prefix starts every kumo token, so that a leaked one is recognised by
// secret scanners and never taken for an OIDC JWT.
const Prefix = "kumo_"

// MaxTTL is the longest a token may live: a forgotten CI token stops working
// within a quarter.
const MaxTTL = 90 * 24 * time.Hour

// maxTokenLen bounds what Verify decodes, so a huge header costs nothing.
const maxTokenLen = 8 << 10

// macDomain separates kumo token MACs from any other use of the key.
const macDomain = "kumo-token-v1\x00"

// Claims is what a token carries, signed.
type Claims struct {
	Version int       `json:"v"`
	KeyID   string    `json:"kid"`
	ID      string    `json:"id"`
	Subject string    `json:"sub"`
	Groups  []string  `json:"groups,omitempty"`
	Issued  time.Time `json:"iat"`
	Expires time.Time `json:"exp"`
}

// Reason says why a token was refused.
type Reason string

const (
	Malformed    Reason = "malformed"
	BadSignature Reason = "bad signature"
	Expired      Reason = "expired"
	Revoked      Reason = "revoked"
	Unknown      Reason = "unknown"
)

// Error is a refused token. Its message names the reason and, once the
// signature held, the token's ID; never the token.
type Error struct {
	Reason Reason
	// ID is the token's ID when the signature verified, else "".
	ID     string
	detail string
}

func (e *Error) Error() string {
	msg := "kumo token refused: " + string(e.Reason)
	if e.ID != "" {
		msg = fmt.Sprintf("kumo token %s refused: %s", e.ID, e.Reason)
	}
	if e.detail != "" {
		msg += " (" + e.detail + ")"
	}
	return msg
}

// IsToken reports whether s has the shape of a kumo token (its prefix), so a
// caller with several verifiers can pick this one.
func IsToken(s string) bool { return strings.HasPrefix(s, Prefix) }

// sign encodes c as a token signed with k.
func sign(k signingKey, c Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(payload)
	return Prefix + body + "." + base64.RawURLEncoding.EncodeToString(mac(k.key, body)), nil
}

func mac(key []byte, body string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macDomain))
	h.Write([]byte(body))
	return h.Sum(nil)
}

// parse checks tok's shape and signature (in constant time) and returns its
// claims; expiry and revocation are the caller's.
func parse(k signingKey, tok string) (Claims, error) {
	if len(tok) > maxTokenLen {
		return Claims{}, &Error{Reason: Malformed, detail: fmt.Sprintf("longer than %d bytes", maxTokenLen)}
	}
	rest, ok := strings.CutPrefix(tok, Prefix)
	if !ok {
		return Claims{}, &Error{Reason: Malformed, detail: "no " + Prefix + " prefix"}
	}
	body, sig, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig, ".") {
		return Claims{}, &Error{Reason: Malformed, detail: "want " + Prefix + "<claims>.<signature>"}
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Claims{}, &Error{Reason: Malformed, detail: "signature is not base64url"}
	}
	if !hmac.Equal(got, mac(k.key, body)) {
		return Claims{}, &Error{Reason: BadSignature, detail: "not signed by this server's token key"}
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return Claims{}, &Error{Reason: Malformed, detail: "claims are not base64url"}
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Claims{}, &Error{Reason: Malformed, detail: "claims: " + err.Error()}
	}
	if c.Version != 1 {
		return Claims{}, &Error{Reason: Malformed, ID: c.ID, detail: fmt.Sprintf("version %d, want 1", c.Version)}
	}
	if c.KeyID != k.id {
		// Signed by this key yet naming another: never issued by kumo.
		return Claims{}, &Error{Reason: BadSignature, ID: c.ID, detail: "key ID mismatch"}
	}
	return c, nil
}

// CheckName checks a subject or group name: printable, no spaces, at most
// 200 characters, so that it reads unambiguously in policies, audit lines
// and listings.
func CheckName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(name) > 200 {
		return fmt.Errorf("%s %.40q... is longer than 200 characters", what, name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%s %q: only printable characters without spaces", what, name)
		}
	}
	return nil
}

// CheckTTL checks a requested lifetime: given, positive, at most MaxTTL.
func CheckTTL(ttl time.Duration) error {
	switch {
	case ttl <= 0:
		return errors.New("ttl must be positive (e.g. --ttl 8h or --ttl 30d): kumo tokens always expire")
	case ttl > MaxTTL:
		return fmt.Errorf("ttl %v is longer than the %d days a kumo token may live", ttl, int(MaxTTL/(24*time.Hour)))
	}
	return nil
}

// ParseTTL reads a lifetime as time.ParseDuration does, plus whole days
// ("30d").
func ParseTTL(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("--ttl is required (e.g. --ttl 8h or --ttl 30d): kumo tokens always expire")
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || fmt.Sprint(n) != days {
			return 0, fmt.Errorf("ttl %q: want a duration such as 8h, 90m or 30d", s)
		}
		if n > int(MaxTTL/(24*time.Hour)) { // checked before n*24h could overflow
			return 0, fmt.Errorf("ttl %s is longer than the %d days a kumo token may live", s, int(MaxTTL/(24*time.Hour)))
		}
		d := time.Duration(n) * 24 * time.Hour
		return d, CheckTTL(d)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("ttl %q: want a duration such as 8h, 90m or 30d", s)
	}
	return d, CheckTTL(d)
}
