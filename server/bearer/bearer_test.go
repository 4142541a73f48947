package bearer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/hydratest"
	"github.com/kumoproj/kumo/internal/token"
	"github.com/kumoproj/kumo/server/oidc"
)

// TestKumoTokens: a kumo token's subject is token:<subject> with its groups;
// once revoked it is refused by the running verifier.
func TestKumoTokens(t *testing.T) {
	dir := t.TempDir()
	tok, rec, err := token.Open(dir).Create("ci-deployer", []string{"deployers"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := Config{KumoTokensDir: dir}.Verifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v := Chain(vs...)
	s, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "token:ci-deployer" || strings.Join(s.Groups, ",") != "deployers" || s.Verified {
		t.Errorf("subject = %+v, want token:ci-deployer in deployers", s)
	}
	if _, err := token.Open(dir).Revoke(rec.ID); err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), tok)
	var te *token.Error
	if !errors.As(err, &te) || te.Reason != token.Revoked {
		t.Fatalf("after revoke: %v, want revoked", err)
	}
	if _, err := v.Verify(context.Background(), "a.b.c"); err == nil || !strings.Contains(err.Error(), "accepts no OIDC token") {
		t.Errorf("a JWT on a server without OIDC: %v", err)
	}
}

// TestChain: with both kinds configured, each token goes to its verifier,
// and a refusal says why.
func TestChain(t *testing.T) {
	idp := hydratest.Start(t)
	app := idp.NewClient(t)
	dir := t.TempDir()
	ktok, _, err := token.Open(dir).Create("bot", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	vs, err := Config{KumoTokensDir: dir, OIDC: &oidc.Config{Issuer: idp.Issuer, ClientID: app.ID}}.Verifiers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := Chain(vs...)
	if s, err := v.Verify(ctx, ktok); err != nil || s.Name != "token:bot" {
		t.Errorf("kumo token: %+v, %v", s, err)
	}
	jwt := idp.Login(t, app, hydratest.User{Subject: "alice", Groups: []string{"ops"}}).IDToken
	if s, err := v.Verify(ctx, jwt); err != nil || s.Name != "alice" || strings.Join(s.Groups, ",") != "ops" {
		t.Errorf("OIDC token: %+v, %v", s, err)
	}
	_, err = v.Verify(ctx, jwt[:len(jwt)-4]+"AAAA")
	var oe *oidc.Error
	if !errors.As(err, &oe) || oe.Reason != oidc.BadSignature {
		t.Errorf("a JWT with a broken signature: %v, want bad signature", err)
	}
	_, err = v.Verify(ctx, "hunter2")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("garbage: %v (must be refused without being echoed)", err)
	}
}
