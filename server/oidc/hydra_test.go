package oidc

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/hydratest"
)

// TestHydra verifies tokens a real OIDC provider (ory/hydra) issued through
// the authorization code flow: accepted and mapped; refused when meant for
// another client, issued by another provider, expired, or re-signed by a key
// the provider does not publish; and accepted again after the provider
// rotated its signing key.
func TestHydra(t *testing.T) {
	idp := hydratest.Start(t)
	kumo, other := idp.NewClient(t), idp.NewClient(t)
	ctx := context.Background()
	v, err := New(ctx, Config{Issuer: idp.Issuer, ClientID: kumo.ID})
	if err != nil {
		t.Fatal(err)
	}
	alice := hydratest.User{Subject: "alice", Email: "alice@example.com", Groups: []string{"shop-dev", "approvers"}}

	tok := idp.Login(t, kumo, alice)
	s, err := v.Verify(ctx, tok.IDToken)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "alice" || strings.Join(s.Groups, ",") != "approvers,shop-dev" {
		t.Errorf("subject = %+v, want alice in approvers,shop-dev", s)
	}

	t.Run("email subject", func(t *testing.T) {
		v, err := New(ctx, Config{Issuer: idp.Issuer, ClientID: kumo.ID, SubjectClaim: "email"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := v.Verify(ctx, tok.IDToken)
		if err != nil || s.Name != "alice@example.com" {
			t.Errorf("Verify = %+v, %v; want alice@example.com", s, err)
		}
	})
	t.Run("another client's token", func(t *testing.T) {
		_, err := v.Verify(ctx, idp.Login(t, other, alice).IDToken)
		refused(t, err, WrongAudience)
	})
	t.Run("another provider's token", func(t *testing.T) {
		idp2 := hydratest.Start(t)
		_, err := v.Verify(ctx, idp2.Login(t, idp2.NewClient(t), alice).IDToken)
		refused(t, err, WrongIssuer)
		if !strings.Contains(err.Error(), idp2.Issuer) || !strings.Contains(err.Error(), idp.Issuer) {
			t.Errorf("error %q does not name both issuers", err)
		}
	})
	t.Run("re-signed by another key", func(t *testing.T) {
		parts := strings.Split(tok.IDToken, ".")
		header, _ := base64.RawURLEncoding.DecodeString(parts[0])
		var h struct{ Kid string }
		json.Unmarshal(header, &h)
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		json.Unmarshal(payload, &claims)
		claims["groups"] = []string{"admins"}
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(ctx, sign(t, key, h.Kid, claims))
		refused(t, err, BadSignature)
	})
	t.Run("expired", func(t *testing.T) {
		short := idp.NewClient(t)
		// Long enough for the login and the first check on a loaded machine
		// (a one-second token expired before it was checked).
		idp.SetIDTokenLifespan(t, short, 5*time.Second)
		v, err := New(ctx, Config{Issuer: idp.Issuer, ClientID: short.ID})
		if err != nil {
			t.Fatal(err)
		}
		tok := idp.Login(t, short, alice)
		if _, err := v.Verify(ctx, tok.IDToken); err != nil {
			t.Fatalf("before expiry: %v", err)
		}
		time.Sleep(time.Until(time.Unix(expiry(t, tok.IDToken), 0).Add(1100 * time.Millisecond)))
		_, err = v.Verify(ctx, tok.IDToken)
		refused(t, err, Expired)
	})
	t.Run("key rotation", func(t *testing.T) {
		idp.RotateKey(t)
		if _, err := v.Verify(ctx, idp.Login(t, kumo, alice).IDToken); err != nil {
			t.Fatalf("a token signed by the rotated key: %v", err)
		}
	})
}

// expiry is the exp claim (Unix seconds) of the JWT token, read without
// verifying it.
func expiry(t *testing.T, token string) int64 {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == 0 {
		t.Fatalf("the token's exp claim: %v", err)
	}
	return claims.Exp
}
