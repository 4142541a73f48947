package hydratest

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLogin: the authorization code flow through a real Hydra yields an ID
// token for the client, with the user's subject and the groups the consent
// added.
func TestLogin(t *testing.T) {
	idp := Start(t)
	app := idp.NewClient(t)
	tok := idp.Login(t, app, User{Subject: "alice", Email: "alice@example.com", Groups: []string{"shop-dev"}})
	parts := strings.Split(tok.IDToken, ".")
	if len(parts) != 3 {
		t.Fatalf("id_token is not a JWS: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Iss, Sub, Email string
		Aud             []string
		Groups          []string
		EmailVerified   bool `json:"email_verified"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	if c.Iss != idp.Issuer || c.Sub != "alice" || !slices.Contains(c.Aud, app.ID) ||
		!slices.Equal(c.Groups, []string{"shop-dev"}) || c.Email != "alice@example.com" || !c.EmailVerified {
		t.Errorf("ID token claims %+v, want iss %s, sub alice, aud %s, groups [shop-dev], verified email", c, idp.Issuer, app.ID)
	}
	if tok.AccessToken == "" {
		t.Error("no access token")
	}
}

// TestLoginUI: with WithUsers, a browser that follows the provider's
// redirects gets a login form, and typing a known user's name into it ends
// at the application's callback with a code for that user; an unknown name
// is refused.
func TestLoginUI(t *testing.T) {
	idp := Start(t, WithUsers(User{Subject: "alice", Groups: []string{"shop-dev"}}))
	const callback = "http://127.0.0.1:1/app/callback"
	app := idp.NewClient(t, callback)
	jar, _ := cookiejar.New(nil)
	var last *url.URL
	browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), callback) {
			last = r.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	authURL := idp.Issuer + "oauth2/auth?" + url.Values{"client_id": {app.ID}, "response_type": {"code"}, "scope": {"openid"},
		"redirect_uri": {callback}, "state": {"state-0123456789"}, "nonce": {"nonce-0123456789"}}.Encode()
	login := func(name string) *http.Response {
		t.Helper()
		resp, err := browser.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="challenge" value="([^"]+)"`).FindSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil || !strings.Contains(string(page), `id="username"`) {
			t.Fatalf("the login page: %s\n%s", resp.Status, page)
		}
		resp, err = browser.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login", url.Values{"challenge": {html.UnescapeString(string(m[1]))}, "username": {name}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := login("mallory"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an unknown user: %s, want 403", resp.Status)
	}
	if resp := login("alice"); resp.StatusCode/100 != 3 || last == nil || last.Query().Get("code") == "" {
		t.Fatalf("alice's login ended at %s (%v), want the callback with a code", resp.Status, last)
	}
}
