package server

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/kumoproj/kumo/server/oidc"
)

// The Web UI's single sign-on through the OIDC issuer the server trusts
// (--oidc-issuer, with the client's secret): the web endpoint runs the
// authorization code flow itself and ends it with the same kumo session
// cookie the owner's login URL sets, now carrying the person's subject and
// groups. The UI server forwards that cookie to the frontend with every call
// it makes for the browser, and the browser sends it to the codec endpoint,
// so both know who calls over plain HTTP on loopback too. (The UI server's
// own OIDC login would keep the token in the browser's storage and hand it
// to the codec endpoint over https only.)
const (
	// SSOLoginPath starts a login: GET /login/oidc?next=<a page of the UI>.
	SSOLoginPath = "/login/oidc"
	// SSOCallbackPath is where the issuer sends the browser back: the
	// redirect URI to register for the client, on the web endpoint.
	SSOCallbackPath = "/login/oidc/callback"
	// ssoFlowCookie binds a login in progress to the browser that started
	// it: state, nonce and PKCE verifier, signed by the session key.
	ssoFlowCookie = "kumo_sso_flow"
	ssoFlowTTL    = 10 * time.Minute
)

// ssoFlow is one login in progress.
type ssoFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"next"`
	Exp      int64  `json:"exp"`
}

// serveSSOLogin sends the browser to the issuer, remembering in a cookie
// the flow's secrets and the UI page to return to.
func (we *webEndpoint) serveSSOLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	next := r.URL.Query().Get("next")
	if next == "" {
		next = we.landingPage()
	}
	if u, err := url.Parse(next); err != nil || !we.uiPage(u) {
		http.Error(w, "kumo: next is not a page of this server's Web UI", http.StatusBadRequest)
		return
	}
	flow := ssoFlow{State: randomText(), Nonce: randomText(), Verifier: oauth2.GenerateVerifier(), Next: next,
		Exp: time.Now().Add(ssoFlowTTL).Unix()}
	value, err := we.sessions.seal("sso-flow", flow)
	if err != nil {
		http.Error(w, "kumo: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: ssoFlowCookie, Value: value, Path: SSOLoginPath, HttpOnly: true, Secure: we.ssoSecure(),
		// Lax: the issuer's redirect back is a top-level navigation from
		// another site, which must carry it.
		SameSite: http.SameSiteLaxMode, MaxAge: int(ssoFlowTTL / time.Second),
	})
	http.Redirect(w, r, we.sso.AuthURL(flow.State, flow.Nonce, flow.Verifier), http.StatusFound)
}

// serveSSOCallback ends a login: the state must be the one this browser's
// flow cookie holds, the code is redeemed with the flow's PKCE verifier, the
// ID token verified (with the flow's nonce), and the session cookie set for
// its subject until the token expires (at most sessionTTL).
func (we *webEndpoint) serveSSOCallback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The flow cookie is spent, whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: ssoFlowCookie, Path: SSOLoginPath, MaxAge: -1, HttpOnly: true, Secure: we.ssoSecure()})
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		http.Error(w, fmt.Sprintf("kumo: the identity provider refused the login: %.100s %.300s", e, q.Get("error_description")), http.StatusForbidden)
		return
	}
	var flow ssoFlow
	c, err := r.Cookie(ssoFlowCookie)
	if err == nil {
		err = we.sessions.open("sso-flow", c.Value, &flow)
	}
	switch {
	case err != nil:
		http.Error(w, "kumo: no login in progress in this browser ("+err.Error()+"); start again at "+SSOLoginPath, http.StatusBadRequest)
		return
	case time.Now().Unix() > flow.Exp:
		http.Error(w, "kumo: the login took too long; start again at "+SSOLoginPath, http.StatusBadRequest)
		return
	case !hmac.Equal([]byte(q.Get("state")), []byte(flow.State)):
		http.Error(w, "kumo: the login's state does not match this browser's; start again at "+SSOLoginPath, http.StatusBadRequest)
		return
	}
	subject, exp, err := we.sso.Exchange(r.Context(), q.Get("code"), flow.Verifier, flow.Nonce)
	if err != nil {
		http.Error(w, "kumo: login refused: "+err.Error(), http.StatusUnauthorized)
		return
	}
	if limit := time.Now().Add(sessionTTL); exp.After(limit) {
		exp = limit
	}
	value, err := we.sessions.issueFor(subject, exp)
	if err != nil {
		http.Error(w, "kumo: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: value, Path: "/", HttpOnly: true, Secure: we.ssoSecure(),
		SameSite: http.SameSiteStrictMode, MaxAge: int(time.Until(exp) / time.Second),
	})
	http.Redirect(w, r, flow.Next, http.StatusSeeOther)
}

// ssoSecure: the cookies are Secure when the browser comes back over https.
func (we *webEndpoint) ssoSecure() bool {
	return strings.HasPrefix(we.sso.RedirectURL(), "https://")
}

// seal signs v (JSON) for purpose; open checks and decodes it. The purpose
// is signed too, so a value sealed for one use is refused for another.
func (s *Sessions) seal(purpose string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.sign(purpose+":"+payload)), nil
}

func (s *Sessions) open(purpose, value string, v any) error {
	payload, sig, ok := strings.Cut(value, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, s.sign(purpose+":"+payload)) {
		return errors.New("not signed by this server")
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// randomText is 32 random bytes, base64url.
func randomText() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// SSO configures the Web UI's single sign-on.
type SSO struct {
	// Verifier is the server's OIDC verifier (--oidc-issuer, --oidc-client-id).
	Verifier *oidc.Verifier
	// ClientSecret is the client's secret at the issuer.
	ClientSecret string
	// CallbackURL is the redirect URI registered for the client; default
	// the web endpoint's URL + SSOCallbackPath (fix its port with
	// --codec-address). It must be on the Web UI's host: the session cookie
	// it sets goes to the UI, and on to the frontend, by host name.
	CallbackURL string
}
