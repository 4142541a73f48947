package server

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/runspec"
)

// TestWebEndpointAnswersOnlyLoggedInBrowsers: the codec endpoint refuses a
// caller without a session (another local account, a web page) and one with
// a forged or expired session; the login URL sets a session only for the
// right token and sends the browser only to the UI; with the session, decode
// answers.
func TestWebEndpointAnswersOnlyLoggedInBrowsers(t *testing.T) {
	ring, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), "codec.keys"))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := NewSessions(runspec.Subject{Name: "local:owner"})
	if err != nil {
		t.Fatal(err)
	}
	we, err := startWebEndpoint("127.0.0.1:0", sessions, ring, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer we.stop()
	const ui = "http://127.0.0.1:8233"
	we.allowUI(ui, ui+"/namespaces/default/workflows")

	decode := func(c *http.Client, cookie string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, we.url+"/default/decode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if code, body := decode(plain, ""); code != http.StatusUnauthorized || !strings.Contains(body, "authentication required") {
		t.Errorf("decode without a session: %d %s, want 401", code, body)
	}
	forged := SessionCookie + "=v1." + "9999999999" + ".AAAA"
	if code, _ := decode(plain, forged); code != http.StatusUnauthorized {
		t.Errorf("decode with a forged session: %d, want 401", code)
	}
	for _, bad := range []string{"Bearer x", "Basic b3duZXI6"} {
		req, _ := http.NewRequest(http.MethodPost, we.url+"/decode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Authorization", bad)
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("decode with Authorization %q and no verifiers: %s, want 401", bad, resp.Status)
		}
	}

	get := func(u string) *http.Response {
		t.Helper()
		resp, err := plain.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	next := ui + "/namespaces/default/workflows"
	wrong := strings.Replace(sessions.LoginURL(we.url, next), "token="+sessions.login, "token=guess", 1)
	if resp := get(wrong); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("login with a wrong token: %s, cookies %v", resp.Status, resp.Cookies())
	}
	if resp := get(sessions.LoginURL(we.url, "https://evil.example/")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("login sending the browser elsewhere: %s, want 400", resp.Status)
	}
	resp := get(sessions.LoginURL(we.url, next))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != next {
		t.Fatalf("login: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login set %+v, want an HttpOnly SameSite=Strict session cookie", cookie)
	}

	// A browser holding the session decodes.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	u, _ := url.Parse(we.url)
	jar.SetCookies(u, []*http.Cookie{cookie})
	if code, body := decode(browser, ""); code != http.StatusOK {
		t.Errorf("decode with a session: %d %s", code, body)
	}
	if s, err := sessions.Verify(cookie.Name + "=" + cookie.Value); err != nil || s.Name != "local:owner" || !s.Verified {
		t.Errorf("verify the session: %+v, %v", s, err)
	}

	// A session from another server run, and an expired one, are refused.
	other, _ := NewSessions(runspec.Subject{Name: "local:owner"})
	if _, err := other.Verify(cookie.Name + "=" + cookie.Value); err == nil {
		t.Error("another server's key accepted the session")
	}
	sessions.now = func() time.Time { return time.Now().Add(sessionTTL + time.Minute) }
	if _, err := sessions.Verify(cookie.Name + "=" + cookie.Value); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired session: %v", err)
	}
}

// TestWebEndpointMountsHTTP: the API's paths go to Options.HTTP with the
// endpoint's authenticator (a session is its owner, no credential is
// refused); login and the codec stay the endpoint's own.
func TestWebEndpointMountsHTTP(t *testing.T) {
	sessions, err := NewSessions(runspec.Subject{Name: "local:owner"})
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authn := RequestAuthenticator(r.Context())
		if authn == nil {
			http.Error(w, "no authenticator", http.StatusInternalServerError)
			return
		}
		s, err := authn(r)
		if err != nil {
			http.Error(w, "api: "+err.Error(), http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "api as "+s.Name)
	})
	we, err := startWebEndpoint("127.0.0.1:0", sessions, nil, nil, nil, api)
	if err != nil {
		t.Fatal(err)
	}
	defer we.stop()
	get := func(path, cookie string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, we.url+path, nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	session := SessionCookie + "=" + sessions.issue()
	for _, path := range []string{"/api/v1/runs", "/openapi.json", "/docs", "/runs/x"} {
		if code, body := get(path, ""); code != http.StatusUnauthorized || !strings.HasPrefix(body, "api: authentication required") {
			t.Errorf("GET %s without a credential: %d %s, want the API's 401", path, code, body)
		}
		if code, body := get(path, session); code != http.StatusOK || body != "api as local:owner" {
			t.Errorf("GET %s with a session: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/apix", "/docs/x", "/default/decode"} {
		if code, body := get(path, session); strings.HasPrefix(body, "api") {
			t.Errorf("GET %s went to the API: %d %s", path, code, body)
		}
	}
	if code, _ := get("/login?token=wrong", ""); code != http.StatusForbidden {
		t.Errorf("login with a wrong token: %d, want the endpoint's 403", code)
	}
	// kumo api's authenticator takes bearer credentials only.
	bearerOnly := BearerAuthenticator(nil)
	req, _ := http.NewRequest(http.MethodGet, "/api/v1/runs", nil)
	req.Header.Set("Cookie", session)
	if _, err := bearerOnly(req); err == nil {
		t.Error("BearerAuthenticator accepted a session cookie")
	}
}

// TestHTTPStaysOnLoopback: a server that would serve the HTTP API on a
// plain-HTTP address beyond loopback does not start.
func TestHTTPStaysOnLoopback(t *testing.T) {
	api := http.NotFoundHandler()
	for addr, ok := range map[string]bool{"": true, "127.0.0.1:0": true, "localhost:0": true, "0.0.0.0:0": false, "192.0.2.1:80": false} {
		err := checkHTTPExposure(Options{HTTP: api, CodecAddress: addr})
		if (err == nil) != ok {
			t.Errorf("--codec-address %q: %v", addr, err)
		}
	}
	if err := checkHTTPExposure(Options{CodecAddress: "0.0.0.0:0"}); err != nil {
		t.Errorf("without the API: %v", err)
	}
}
