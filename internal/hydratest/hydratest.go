// Package hydratest runs a real OpenID Connect provider for tests: ory/hydra
// (Apache-2.0) on 127.0.0.1 with its in-memory SQLite store, and logs users in
// through it with the authorization code flow, accepting the login and
// consent through Hydra's admin API as a login UI would. The binary is built
// by hack/build-tools.sh (cgo, ≈ 3 CPU-minutes cold) and cached by version
// with the other tools.
//
//	idp := hydratest.Start(t)
//	app := idp.NewClient(t)
//	tok := idp.Login(t, app, hydratest.User{Subject: "alice", Groups: []string{"shop-dev"}})
//	// tok.IDToken is a JWT signed by Hydra, for audience app.ID, issuer idp.Issuer.
package hydratest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/internal/testproc"
)

// Version is the version hack/build-tools.sh builds (a test keeps them in
// sync).
const Version = "v2.3.0"

// Binary returns the path of the hydra binary, building it if it is missing.
func Binary() (string, error) {
	dir := localcluster.DefaultBinDir()
	path := filepath.Join(dir, "hydra-"+Version)
	return path, localcluster.EnsureTools(dir, map[string]string{"hydra": path})
}

// binaryFor finds the binary for t: one already built is used, even with
// -short (it starts in about a second). A missing one is built, except with
// -short outside CI, where the test is skipped saying how to build it; in CI
// (CI=true) a missing binary is built and a failed build fails the test,
// never skips it.
func binaryFor(t testing.TB) string {
	t.Helper()
	path := filepath.Join(localcluster.DefaultBinDir(), "hydra-"+Version)
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return path
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skipf("needs ory/hydra %s, not built at %s (hack/build-tools.sh hydra builds it, a few minutes cold); skipped with -short", Version, path)
	}
	path, err := Binary()
	if err != nil {
		t.Fatalf("hydratest: %v", err)
	}
	return path
}

// Server is a running Hydra.
type Server struct {
	// Issuer is the issuer URL tokens carry ("http://127.0.0.1:<port>/").
	Issuer string
	// Admin is the admin API's base URL.
	Admin string

	t    testing.TB
	proc *testproc.Process
}

// Option configures Start.
type Option func(*options)

type options struct{ users []User }

// WithUsers serves a login and consent UI (loginui.go) at which these users
// log in with a browser by typing their subject; without it Hydra's login
// and consent URLs lead nowhere, and only Login logs users in.
func WithUsers(users ...User) Option {
	return func(o *options) { o.users = append(o.users, users...) }
}

// Start starts Hydra for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin := binaryFor(t)
	ports, err := quietport.Pick("127.0.0.1", 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	pub, adm := strconv.Itoa(ports[0]), strconv.Itoa(ports[1])
	s := &Server{
		Issuer: "http://127.0.0.1:" + pub + "/",
		Admin:  "http://127.0.0.1:" + adm,
		t:      t,
	}
	// --dev allows the plain-HTTP issuer on loopback. Without users, the
	// login and consent URLs are never fetched: Login reads the challenges
	// from the redirects.
	loginURL, consentURL := "http://127.0.0.1:1/login", "http://127.0.0.1:1/consent"
	if len(o.users) > 0 {
		ui := s.startLoginUI(t, o.users)
		loginURL, consentURL = ui+"/login", ui+"/consent"
	}
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out")
	cmd.Env = append(os.Environ(),
		"DSN=memory", "SECRETS_SYSTEM="+hex.EncodeToString(secret), "LOG_LEVEL=info", "LOG_LEAK_SENSITIVE_VALUES=false",
		"URLS_SELF_ISSUER="+s.Issuer, "URLS_LOGIN="+loginURL, "URLS_CONSENT="+consentURL,
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+pub, "SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+adm,
		"OIDC_SUBJECT_IDENTIFIERS_SUPPORTED_TYPES=public",
	)
	s.proc = testproc.Start(t, "hydra", dir, cmd)
	s.proc.WaitReady(t, func() bool {
		return ready(s.Admin+"/health/ready") && ready(s.Issuer+".well-known/openid-configuration")
	})
	return s
}

func ready(u string) bool {
	resp, err := http.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Client is an OAuth2 client registered with the server.
type Client struct {
	ID, Secret, RedirectURI string
}

// NewClient registers a confidential client for the authorization code flow
// (the audience of the ID tokens it obtains is its ID), with the redirect
// URIs given (an application's callback), else one that Login never fetches
// (it reads the code from the redirect). RedirectURI is the first.
func (s *Server) NewClient(t testing.TB, redirectURIs ...string) Client {
	t.Helper()
	if len(redirectURIs) == 0 {
		redirectURIs = []string{"http://127.0.0.1:1/callback"}
	}
	redirect := redirectURIs[0]
	var out struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	s.admin(t, http.MethodPost, "/admin/clients", nil, map[string]any{
		"client_name":                "kumo-test",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      "openid email profile offline_access",
		"redirect_uris":              redirectURIs,
		"token_endpoint_auth_method": "client_secret_basic",
	}, &out)
	if out.ID == "" || out.Secret == "" {
		t.Fatalf("hydratest: the new client has no ID or secret")
	}
	return Client{ID: out.ID, Secret: out.Secret, RedirectURI: redirect}
}

// SetIDTokenLifespan makes the ID tokens c obtains from now on live d
// (Hydra's per-client lifespans), e.g. to see one expire.
func (s *Server) SetIDTokenLifespan(t testing.TB, c Client, d time.Duration) {
	t.Helper()
	s.admin(t, http.MethodPut, "/admin/clients/"+url.PathEscape(c.ID)+"/lifespans", nil, map[string]any{
		"authorization_code_grant_id_token_lifespan":     d.String(),
		"authorization_code_grant_access_token_lifespan": d.String(),
	}, nil)
}

// RotateKey makes Hydra sign ID tokens with a new key, published in its JWKS
// next to the old ones.
func (s *Server) RotateKey(t testing.TB) {
	t.Helper()
	s.admin(t, http.MethodPost, "/admin/keys/hydra.openid.id-token", nil, map[string]any{
		"alg": "RS256", "use": "sig", "kid": "rotated-" + randHex(t, 4),
	}, nil)
}

// User is who logs in: the subject Hydra puts in "sub", and claims the
// consent adds to the ID token.
type User struct {
	Subject string
	// Email, if set, is added with "email_verified": true.
	Email  string
	Groups []string
}

// idClaims are the claims the consent adds to user's ID token.
func (u User) idClaims() map[string]any {
	c := map[string]any{}
	if u.Groups != nil {
		c["groups"] = u.Groups
	}
	if u.Email != "" {
		c["email"], c["email_verified"] = u.Email, true
	}
	return c
}

// Tokens are what the token endpoint returned.
type Tokens struct {
	IDToken, AccessToken string
	Expiry               time.Time
}

// Login runs the authorization code flow for user with client c: the
// authorization request, the login and consent accepted through the admin
// API, the code exchanged at the token endpoint.
func (s *Server) Login(t testing.TB, c Client, user User) Tokens {
	t.Helper()
	q := url.Values{
		"client_id": {c.ID}, "response_type": {"code"}, "scope": {"openid email"},
		"redirect_uri": {c.RedirectURI}, "state": {randHex(t, 16)}, "nonce": {randHex(t, 16)},
	}
	state := q.Get("state")
	callback := s.Authorize(t, s.Issuer+"oauth2/auth?"+q.Encode(), user)
	if got := query(t, callback, "state"); got != state {
		t.Fatalf("hydratest: callback state %q, want %q", got, state)
	}
	code := query(t, callback, "code")

	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI}}
	r, err := http.NewRequest(http.MethodPost, s.Issuer+"oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	var tok struct {
		IDToken     string `json:"id_token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	do(t, http.DefaultClient, r, &tok)
	if tok.IDToken == "" {
		t.Fatal("hydratest: the token endpoint returned no id_token")
	}
	return Tokens{IDToken: tok.IDToken, AccessToken: tok.AccessToken, Expiry: time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)}
}

// Authorize takes a browser (with no session at the provider) from an
// authorization URL an application made to the application's callback, user
// logging in and consenting through the admin API, and returns the callback
// URL (with code and state) without fetching it.
func (s *Server) Authorize(t testing.TB, authURL string, user User) *url.URL {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	loginURL := s.follow(t, browser, authURL)
	challenge := query(t, loginURL, "login_challenge")

	var next struct {
		RedirectTo string `json:"redirect_to"`
	}
	s.admin(t, http.MethodPut, "/admin/oauth2/auth/requests/login/accept", url.Values{"login_challenge": {challenge}},
		map[string]any{"subject": user.Subject}, &next)
	consentURL := s.follow(t, browser, next.RedirectTo)
	consent := query(t, consentURL, "consent_challenge")

	var req struct {
		Scope    []string `json:"requested_scope"`
		Audience []string `json:"requested_access_token_audience"`
	}
	s.admin(t, http.MethodGet, "/admin/oauth2/auth/requests/consent", url.Values{"consent_challenge": {consent}}, nil, &req)
	s.admin(t, http.MethodPut, "/admin/oauth2/auth/requests/consent/accept", url.Values{"consent_challenge": {consent}},
		map[string]any{"grant_scope": req.Scope, "grant_access_token_audience": req.Audience,
			"session": map[string]any{"id_token": user.idClaims()}}, &next)
	return s.follow(t, browser, next.RedirectTo)
}

// follow GETs u on the public side and returns where it redirects.
func (s *Server) follow(t testing.TB, browser *http.Client, u string) *url.URL {
	t.Helper()
	resp, err := browser.Get(u)
	if err != nil {
		t.Fatalf("hydratest: GET %s: %v", u, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc, err := resp.Location()
	if resp.StatusCode/100 != 3 || err != nil {
		t.Fatalf("hydratest: GET %s: %s, want a redirect:\n%s\nhydra log:\n%s", u, resp.Status, body, s.proc.LogTail())
	}
	if e := loc.Query().Get("error"); e != "" {
		t.Fatalf("hydratest: GET %s redirected with error %s: %s", u, e, loc.Query().Get("error_description"))
	}
	return loc
}

func query(t testing.TB, u *url.URL, key string) string {
	t.Helper()
	v := u.Query().Get(key)
	if v == "" {
		t.Fatalf("hydratest: %s has no %s", u.Redacted(), key)
	}
	return v
}

// admin calls the admin API, sending in as JSON and decoding the answer into
// out (if not nil).
func (s *Server) admin(t testing.TB, method, path string, q url.Values, in, out any) {
	t.Helper()
	if err := s.adminCall(method, path, q, in, out); err != nil {
		t.Fatalf("hydratest: %v", err)
	}
}

// adminCall is admin, returning its error (for the login UI's handlers,
// which may not end the test).
func (s *Server) adminCall(method, path string, q url.Values, in, out any) error {
	u := s.Admin + path
	if q != nil {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	r, err := http.NewRequest(method, u, body)
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return nil
}

func do(t testing.TB, c *http.Client, r *http.Request, out any) {
	t.Helper()
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("hydratest: %s %s: %v", r.Method, r.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("hydratest: %s %s: %s: %s", r.Method, r.URL.Path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("hydratest: %s %s: %v in %s", r.Method, r.URL.Path, err, b)
		}
	}
}

func randHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
