package oidc

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/kumoproj/kumo/internal/hydratest"
)

// TestLogin: the Web UI's authorization code flow against a real Hydra
// yields the subject of the user who logged in, with groups; the code is
// refused without the login's PKCE verifier or a second time, and the ID
// token without the login's nonce.
func TestLogin(t *testing.T) {
	idp := hydratest.Start(t)
	const callback = "http://127.0.0.1:1/login/oidc/callback"
	app := idp.NewClient(t, callback)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: idp.Issuer, ClientID: app.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Login("", callback); err == nil {
		t.Error("a login without the client secret was accepted")
	}
	if _, err := v.Login(app.Secret, "http://kumo.example.com/login/oidc/callback"); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("a plain-http callback beyond loopback: %v", err)
	}
	login, err := v.Login(app.Secret, callback)
	if err != nil {
		t.Fatal(err)
	}
	alice := hydratest.User{Subject: "alice", Groups: []string{"shop-viewers"}}
	code := func(nonce, verifier string) string {
		t.Helper()
		cb := idp.Authorize(t, login.AuthURL("state-0123456789", nonce, verifier), alice)
		if cb.Query().Get("state") != "state-0123456789" {
			t.Fatalf("callback %s lost the state", cb.Redacted())
		}
		return cb.Query().Get("code")
	}

	verifier := oauth2.GenerateVerifier()
	c := code("nonce-0123456781", verifier)
	s, exp, err := login.Exchange(ctx, c, verifier, "nonce-0123456781")
	if err != nil || s.Name != "alice" || strings.Join(s.Groups, ",") != "shop-viewers" || exp.IsZero() {
		t.Fatalf("Exchange = %+v, %v, %v; want alice in shop-viewers", s, exp, err)
	}
	if _, _, err := login.Exchange(ctx, c, verifier, "nonce-0123456781"); err == nil {
		t.Error("a code redeemed twice")
	}
	if _, _, err := login.Exchange(ctx, code("nonce-0123456782", verifier), oauth2.GenerateVerifier(), "nonce-0123456782"); err == nil {
		t.Error("a code redeemed with another PKCE verifier")
	}
	v2 := oauth2.GenerateVerifier()
	if _, _, err := login.Exchange(ctx, code("nonce-0123456783", v2), v2, "nonce-0123456789"); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("an ID token of another login's nonce: %v", err)
	}
}
