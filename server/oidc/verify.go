package oidc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/kumoproj/kumo/runspec"
)

// ReservedPrefixes start the names of subjects kumo authenticates in other
// ways (the local account, kumo-issued tokens, kumo's own parts) or that
// mean something else in a policy (a group): an OIDC subject with one of
// them is refused, so no identity provider can name someone into them.
var ReservedPrefixes = []string{"local:", "token:", "worker:", "kumo-", "system:", "group:"}

// Reason says why a token was refused.
type Reason string

const (
	Malformed     Reason = "malformed"
	WrongIssuer   Reason = "wrong issuer"
	WrongAudience Reason = "wrong audience"
	BadSignature  Reason = "bad signature"
	Expired       Reason = "expired"
	BadClaims     Reason = "bad claims"
)

// Error is a refused token: the reason and what was wrong, never the token.
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("oidc token refused: %s: %s", e.Reason, e.Detail)
}

// Verifier verifies the tokens of one issuer for one audience.
type Verifier struct {
	cfg      Config
	verifier *gooidc.IDTokenVerifier
	// endpoint and client serve the Web UI's login (login.go).
	endpoint oauth2.Endpoint
	client   *http.Client
}

// New checks cfg, reads the issuer's discovery document and returns a
// verifier. An issuer that cannot be reached is an error: a server that was
// asked to accept its tokens does not start without it.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client, err := httpClient(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	provider, err := gooidc.NewProvider(gooidc.ClientContext(dctx, client), cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc: issuer %s: discovery: %w", cfg.Issuer, err)
	}
	keys, err := newKeySet(dctx, jwksURL(provider), client)
	if err != nil {
		return nil, fmt.Errorf("oidc: issuer %s: key set: %w", cfg.Issuer, err)
	}
	var algs struct {
		IDTokenAlgs []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := provider.Claims(&algs); err != nil {
		return nil, fmt.Errorf("oidc: issuer %s: discovery: %w", cfg.Issuer, err)
	}
	algs.IDTokenAlgs = slices.DeleteFunc(algs.IDTokenAlgs, func(a string) bool { return strings.EqualFold(a, "none") })
	v := gooidc.NewVerifier(cfg.Issuer, keys, &gooidc.Config{ClientID: cfg.ClientID, SupportedSigningAlgs: algs.IDTokenAlgs})
	return &Verifier{cfg: cfg, verifier: v, endpoint: provider.Endpoint(), client: client}, nil
}

// jwksURL is the key set's address from the discovery document.
func jwksURL(p *gooidc.Provider) string {
	var d struct {
		JWKS string `json:"jwks_uri"`
	}
	_ = p.Claims(&d) // already decoded once by NewProvider
	return d.JWKS
}

func httpClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the issuer is reached directly, as the operator named it
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("oidc: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("oidc: CA file %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}, nil
}

// Issuer is the issuer this verifier trusts.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// Verify checks raw's signature against the issuer's keys, its issuer,
// audience and expiry, and maps its claims to a subject (Verified is left
// to the frontend that stamps it). A refusal is an *Error.
func (v *Verifier) Verify(ctx context.Context, raw string) (runspec.Subject, error) {
	s, _, err := v.verify(ctx, raw)
	return s, err
}

// verify is Verify, also returning the token for its nonce and expiry.
func (v *Verifier) verify(ctx context.Context, raw string) (runspec.Subject, *gooidc.IDToken, error) {
	tok, err := v.verifier.Verify(ctx, raw)
	if err != nil {
		return runspec.Subject{}, nil, v.explain(raw, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return runspec.Subject{}, nil, &Error{BadClaims, err.Error()}
	}
	name, err := v.subjectName(claims)
	if err != nil {
		return runspec.Subject{}, nil, err
	}
	groups, err := v.groups(claims)
	if err != nil {
		return runspec.Subject{}, nil, err
	}
	return runspec.Subject{Name: name, Groups: groups}, tok, nil
}

func (v *Verifier) subjectName(claims map[string]any) (string, error) {
	c := v.cfg.SubjectClaim
	name, ok := claims[c].(string)
	if !ok || name == "" {
		return "", &Error{BadClaims, fmt.Sprintf("no string claim %q to take the subject from", c)}
	}
	if c == "email" {
		if verified, _ := claims["email_verified"].(bool); !verified {
			return "", &Error{BadClaims, fmt.Sprintf("email %q is not verified (claim email_verified is not true)", name)}
		}
	}
	if err := checkName(name); err != nil {
		return "", &Error{BadClaims, fmt.Sprintf("claim %q: %v", c, err)}
	}
	for _, p := range ReservedPrefixes {
		if strings.HasPrefix(name, p) {
			return "", &Error{BadClaims, fmt.Sprintf("subject %q starts with %q, which names subjects kumo authenticates itself", name, p)}
		}
	}
	return name, nil
}

func (v *Verifier) groups(claims map[string]any) ([]string, error) {
	c := v.cfg.GroupsClaim
	var groups []string
	switch g := claims[c].(type) {
	case nil:
		return nil, nil
	case string:
		groups = []string{g}
	case []any:
		for _, e := range g {
			s, ok := e.(string)
			if !ok {
				return nil, &Error{BadClaims, fmt.Sprintf("claim %q holds a %T, want strings", c, e)}
			}
			groups = append(groups, s)
		}
	default:
		return nil, &Error{BadClaims, fmt.Sprintf("claim %q is a %T, want a string or a list of strings", c, g)}
	}
	for _, g := range groups {
		if err := checkName(g); err != nil {
			return nil, &Error{BadClaims, fmt.Sprintf("claim %q: %v", c, err)}
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}

// checkName: printable, no spaces, bounded, so it reads unambiguously in
// policies, audit lines and listings.
func checkName(s string) error {
	if len(s) > 256 {
		return fmt.Errorf("%.40q... is longer than 256 bytes", s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%q holds a space or an unprintable character", s)
		}
	}
	return nil
}

// explain turns go-oidc's error into an *Error. go-oidc checks the signature
// before the issuer and audience, so a token of another issuer fails as a bad
// signature; its unverified claims, read here only to word the error, say
// whether it was meant for someone else.
func (v *Verifier) explain(raw string, err error) error {
	var exp *gooidc.TokenExpiredError
	if errors.As(err, &exp) {
		return &Error{Expired, "expired at " + exp.Expiry.UTC().Format(time.RFC3339)}
	}
	var c struct {
		Iss string          `json:"iss"`
		Aud json.RawMessage `json:"aud"`
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return &Error{Malformed, "not a signed JWT (want header.payload.signature)"}
	}
	if payload, derr := base64.RawURLEncoding.DecodeString(parts[1]); derr == nil && json.Unmarshal(payload, &c) == nil {
		var aud []string
		if json.Unmarshal(c.Aud, &aud) != nil {
			var one string
			if json.Unmarshal(c.Aud, &one) == nil {
				aud = []string{one}
			}
		}
		switch {
		case c.Iss != v.cfg.Issuer:
			return &Error{WrongIssuer, fmt.Sprintf("issued by %.200q; this server trusts %s", c.Iss, v.cfg.Issuer)}
		case !slices.Contains(aud, v.cfg.ClientID):
			return &Error{WrongAudience, fmt.Sprintf("issued for %.200q, not for client %s", aud, v.cfg.ClientID)}
		}
	}
	msg := strings.TrimPrefix(err.Error(), "oidc: ")
	switch {
	case strings.Contains(msg, "verify signature"), strings.Contains(msg, "fetching keys"):
		return &Error{BadSignature, "not signed by a key " + v.cfg.Issuer + " publishes (" + msg + ")"}
	case strings.Contains(msg, "malformed jwt"), strings.Contains(msg, "not signed"), strings.Contains(msg, "multiple signatures"):
		return &Error{Malformed, msg}
	}
	return &Error{BadClaims, msg}
}
