package oidc

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// issuer is a minimal OIDC issuer for unit tests: discovery and JWKS over
// HTTP on loopback, and tokens signed with its current key. The real
// provider (ory/hydra) is exercised in hydra_test.go; this one lets a test
// sign exactly the claims it needs, with keys it rotates.
type issuer struct {
	srv      *httptest.Server
	keys     []*rsa.PrivateKey // published; the last signs
	kid      []string
	jwksHits atomic.Int32
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	is.rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"authorization_endpoint": is.srv.URL + "/auth", "token_endpoint": is.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		var set jose.JSONWebKeySet
		for i, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: is.kid[i], Algorithm: "RS256", Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) rotate(t *testing.T) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.keys = append(is.keys, k)
	is.kid = append(is.kid, "k"+string(rune('0'+len(is.kid))))
}

// claims are a valid token's claims for audience "kumo", for alice in two
// groups, changed by edits.
func (is *issuer) claims(edits ...func(map[string]any)) map[string]any {
	c := map[string]any{
		"iss": is.srv.URL, "aud": "kumo", "sub": "alice", "email": "alice@example.com", "email_verified": true,
		"groups": []string{"shop-dev", "devs"}, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}
	for _, e := range edits {
		e(c)
	}
	return c
}

func sign(t *testing.T, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (is *issuer) token(t *testing.T, edits ...func(map[string]any)) string {
	n := len(is.keys) - 1
	return sign(t, is.keys[n], is.kid[n], is.claims(edits...))
}

func refused(t *testing.T, err error, want Reason) {
	t.Helper()
	var oe *Error
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want an *oidc.Error (%s)", err, want)
	}
	if oe.Reason != want {
		t.Fatalf("refused for %q (%v), want %q", oe.Reason, err, want)
	}
}

func TestVerify(t *testing.T) {
	is := newIssuer(t)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: is.srv.URL, ClientID: "kumo"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.Verify(ctx, is.token(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "alice" || strings.Join(s.Groups, ",") != "devs,shop-dev" || s.Verified {
		t.Errorf("subject = %+v, want alice in devs,shop-dev (unverified until the frontend stamps it)", s)
	}

	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tok  string
		want Reason
	}{
		{"another key, same kid", sign(t, other, is.kid[0], is.claims()), BadSignature},
		{"another key, unknown kid", sign(t, other, "nope", is.claims()), BadSignature},
		{"another issuer", is.token(t, func(c map[string]any) { c["iss"] = "https://evil.example" }), WrongIssuer},
		{"another audience", is.token(t, func(c map[string]any) { c["aud"] = []string{"other-app"} }), WrongAudience},
		{"expired", is.token(t, func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), Expired},
		{"unsigned", unsigned(is.claims()), Malformed},
		{"not a JWT", "kumo_abc.def", Malformed},
		{"no subject", is.token(t, func(c map[string]any) { delete(c, "sub") }), BadClaims},
		{"reserved subject", is.token(t, func(c map[string]any) { c["sub"] = "token:ci-deployer" }), BadClaims},
		{"groups not strings", is.token(t, func(c map[string]any) { c["groups"] = []any{1, 2} }), BadClaims},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(ctx, c.tok)
			refused(t, err, c.want)
			if sig := c.tok[strings.LastIndex(c.tok, ".")+1:]; len(sig) > 8 && strings.Contains(err.Error(), sig) {
				t.Errorf("error echoes the token: %v", err)
			}
		})
	}
}

// unsigned is a JWT with alg "none" and no signature.
func unsigned(claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	p, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "."
}

// TestKeyRotation: a token signed by a key the issuer published after the
// verifier started verifies (the key set is fetched again).
func TestKeyRotation(t *testing.T) {
	is := newIssuer(t)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: is.srv.URL, ClientID: "kumo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, is.token(t)); err != nil {
		t.Fatal(err)
	}
	is.rotate(t)
	if _, err := v.Verify(ctx, is.token(t)); err != nil {
		t.Fatalf("a token signed by the rotated key: %v", err)
	}
}

func TestEmailSubject(t *testing.T) {
	is := newIssuer(t)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: is.srv.URL, ClientID: "kumo", SubjectClaim: "email", GroupsClaim: "roles"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.Verify(ctx, is.token(t, func(c map[string]any) { c["roles"] = "ops" }))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "alice@example.com" || strings.Join(s.Groups, ",") != "ops" {
		t.Errorf("subject = %+v, want alice@example.com in ops", s)
	}
	_, err = v.Verify(ctx, is.token(t, func(c map[string]any) { c["email_verified"] = false }))
	refused(t, err, BadClaims)
	_, err = v.Verify(ctx, is.token(t, func(c map[string]any) { delete(c, "email_verified") }))
	refused(t, err, BadClaims)
}

func TestConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ClientID: "kumo"}, "issuer URL is required"},
		{Config{Issuer: "https://id.example.com"}, "client ID"},
		{Config{Issuer: "http://id.example.com", ClientID: "kumo"}, "plain http"},
		{Config{Issuer: "ftp://id.example.com", ClientID: "kumo"}, "not an http(s) URL"},
		{Config{Issuer: "https://id.example.com?x=1", ClientID: "kumo"}, "query"},
	} {
		if err := c.cfg.withDefaults().Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	if err := (Config{Issuer: "http://127.0.0.1:4444/", ClientID: "kumo"}).Validate(); err != nil {
		t.Errorf("a loopback http issuer: %v", err)
	}
	// An issuer that does not answer stops New, not the first request.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if _, err := New(context.Background(), Config{Issuer: srv.URL, ClientID: "kumo"}); err == nil || !strings.Contains(err.Error(), "discovery") {
		t.Errorf("New with an issuer that is down: %v", err)
	}
}

// TestForgedTokensDoNotHammerTheIssuer: tokens that do not verify make the
// verifier fetch the issuer's key set again only for key IDs it does not
// hold, at most once a second; never for a known key ID.
func TestForgedTokensDoNotHammerTheIssuer(t *testing.T) {
	is := newIssuer(t)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: is.srv.URL, ClientID: "kumo"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	start := is.jwksHits.Load()
	for range 50 {
		_, err := v.Verify(ctx, sign(t, other, is.kid[0], is.claims()))
		refused(t, err, BadSignature)
	}
	if n := is.jwksHits.Load() - start; n != 0 {
		t.Errorf("50 forged tokens naming the issuer's key fetched its key set %d times, want 0", n)
	}
	began := time.Now()
	for i := range 3 {
		_, err := v.Verify(ctx, sign(t, other, fmt.Sprintf("unknown-%d", i), is.claims()))
		refused(t, err, BadSignature)
	}
	if n, most := is.jwksHits.Load()-start, int32(time.Since(began)/time.Second)+1; n > most {
		t.Errorf("3 tokens naming unknown keys fetched the key set %d times in %v, want at most %d", n, time.Since(began), most)
	}
}
