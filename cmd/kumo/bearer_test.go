package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/hydratest"
)

// TestServerBearerCredentials: `kumo server --kumo-tokens --oidc-issuer … --oidc-client-id …`
// accepts at its codec endpoint a kumo token and an ID token the OIDC
// provider (a real ory/hydra) issued for its client; it refuses another
// client's ID token and garbage, without echoing them, and a kumo token from
// the moment it is revoked. An issuer that cannot be reached stops the server
// from starting.
func TestServerBearerCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	idp := hydratest.Start(t)
	app, other := idp.NewClient(t), idp.NewClient(t)

	e.fails([]string{"server", "--address", "127.0.0.1:0", "--oidc-issuer", "http://127.0.0.1:1/", "--oidc-client-id", app.ID}, "discovery")
	e.fails([]string{"server", "--address", "127.0.0.1:0", "--oidc-client-id", app.ID}, "--oidc-client-id is set but --oidc-issuer is not")
	e.fails([]string{"server", "--address", "127.0.0.1:0", "--token", "kumo_x.y"}, "kumo server does not use --token")

	tok := strings.TrimSpace(e.ok("token", "create", "--subject", "ci", "--ttl", "1h").stdout)
	srv := e.startServer("--kumo-tokens", "--oidc-issuer", idp.Issuer, "--oidc-client-id", app.ID)
	decode := func(bearer string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.info.CodecURL+"/default/decode", strings.NewReader(`{"payloads":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	alice := hydratest.User{Subject: "alice", Groups: []string{"shop-dev"}}
	if code, body := decode(tok); code != http.StatusOK {
		t.Errorf("kumo token: %d %s", code, body)
	}
	if code, body := decode(idp.Login(t, app, alice).IDToken); code != http.StatusOK {
		t.Errorf("OIDC ID token: %d %s", code, body)
	}
	otherTok := idp.Login(t, other, alice).IDToken
	if code, body := decode(otherTok); code != http.StatusUnauthorized || !strings.Contains(body, "wrong audience") || strings.Contains(body, otherTok) {
		t.Errorf("another client's ID token: %d %s, want 401 saying wrong audience, without the token", code, body)
	}
	if code, body := decode("hunter2hunter2"); code != http.StatusUnauthorized || strings.Contains(body, "hunter2") {
		t.Errorf("garbage: %d %s, want 401 without echoing it", code, body)
	}

	var id string
	for _, line := range strings.Split(e.ok("token", "list").stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "ci" {
			id = f[0]
		}
	}
	e.ok("token", "revoke", id)
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, body := decode(tok)
		if code == http.StatusUnauthorized && strings.Contains(body, "revoked") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a revoked kumo token is still not refused as revoked 5s later: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
