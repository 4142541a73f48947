package server

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/hydratest"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/oidc"
)

// TestSSOLogin: the web endpoint's single sign-on through a real Hydra. A
// login ends with a session for the person the provider authenticated (with
// groups), which the codec endpoint answers; the callback is refused
// without the browser's flow cookie, with a tampered one, with another
// login's state, or when the provider refused; a login cannot send the
// browser off the UI.
func TestSSOLogin(t *testing.T) {
	idp := hydratest.Start(t)
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	app := idp.NewClient(t, "http://"+address+SSOCallbackPath)
	ctx := context.Background()
	v, err := oidc.New(ctx, oidc.Config{Issuer: idp.Issuer, ClientID: app.ID})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), "codec.keys"))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := NewSessions(runspec.Subject{Name: "local:owner"})
	if err != nil {
		t.Fatal(err)
	}
	we, err := startWebEndpoint(address, sessions, ring, nil, &SSO{Verifier: v, ClientSecret: app.Secret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer we.stop()
	const ui = "http://127.0.0.1:8233"
	landing := ui + "/namespaces/default/workflows"
	we.allowUI(ui, landing)
	if we.sso.RedirectURL() != app.RedirectURI {
		t.Fatalf("callback %s, want %s", we.sso.RedirectURL(), app.RedirectURI)
	}

	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string, cookies ...*http.Cookie) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	cookie := func(resp *http.Response, name string) *http.Cookie {
		for _, c := range resp.Cookies() {
			if c.Name == name && c.MaxAge >= 0 {
				return c
			}
		}
		return nil
	}
	// start begins a login and returns its flow cookie and the callback
	// URL the provider sends the browser to once alice logged in.
	alice := hydratest.User{Subject: "alice", Groups: []string{"shop-viewers"}}
	start := func() (*http.Cookie, string) {
		t.Helper()
		resp := get(we.url + SSOLoginPath)
		flow := cookie(resp, ssoFlowCookie)
		if resp.StatusCode != http.StatusFound || flow == nil || !flow.HttpOnly || flow.SameSite != http.SameSiteLaxMode {
			t.Fatalf("login start: %s, flow cookie %+v", resp.Status, flow)
		}
		return flow, idp.Authorize(t, resp.Header.Get("Location"), alice).String()
	}

	if resp := get(we.url + SSOLoginPath + "?next=" + url.QueryEscape("https://evil.example/")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a login sending the browser elsewhere: %s, want 400", resp.Status)
	}

	flow, callback := start()
	if resp := get(callback); resp.StatusCode != http.StatusBadRequest || cookie(resp, SessionCookie) != nil {
		t.Errorf("callback without the flow cookie: %s, want 400 and no session", resp.Status)
	}
	tampered := *flow
	tampered.Value = strings.Replace(flow.Value, ".", "x.", 1)
	if resp := get(callback, &tampered); resp.StatusCode != http.StatusBadRequest || cookie(resp, SessionCookie) != nil {
		t.Errorf("callback with a tampered flow cookie: %s, want 400 and no session", resp.Status)
	}
	other, _ := start()
	if resp := get(callback, other); resp.StatusCode != http.StatusBadRequest || cookie(resp, SessionCookie) != nil {
		t.Errorf("callback with another login's flow cookie: %s, want 400 and no session", resp.Status)
	}
	if resp := get(we.url+SSOCallbackPath+"?error=access_denied&state=x", flow); resp.StatusCode != http.StatusForbidden {
		t.Errorf("callback of a refused login: %s, want 403", resp.Status)
	}

	flow, callback = start()
	resp := get(callback, flow)
	session := cookie(resp, SessionCookie)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != landing || session == nil || !session.HttpOnly {
		t.Fatalf("callback: %s to %q, session %+v; want 303 to %s with a session", resp.Status, resp.Header.Get("Location"), session, landing)
	}
	s, err := sessions.Verify(session.Name + "=" + session.Value)
	if err != nil || s.Name != "alice" || strings.Join(s.Groups, ",") != "shop-viewers" || !s.Verified {
		t.Errorf("the session is %+v, %v; want alice in shop-viewers", s, err)
	}
	req, _ := http.NewRequest(http.MethodPost, we.url+"/default/decode", strings.NewReader(`{"payloads":[]}`))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(session)
	if resp, err := plain.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusOK {
		t.Errorf("decode with alice's session: %s", resp.Status)
	}
	if resp := get(callback, flow); resp.StatusCode == http.StatusSeeOther {
		t.Error("the same code logged in twice")
	}
}
