package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kumoproj/kumo/runspec"
)

// SessionCookie is the cookie in which a browser that logged in to kumo
// server's Web UI carries its session. The UI server forwards it to the
// Temporal frontend with every call it makes for that browser, and the
// browser sends it to the codec endpoint; both accept the call only with a
// valid session.
const SessionCookie = "kumo_session"

// sessionTTL is how long a browser stays logged in.
const sessionTTL = 12 * time.Hour

// ErrNoSession is returned by Sessions.Verify for a request that carries no
// session at all.
var ErrNoSession = errors.New("no kumo session")

// Sessions logs people in to the Web UI of one kumo server run.
//
// kumo server prints a login URL holding a random login token (and records it
// in server.json, which only the owner can read); opening it sets a session
// cookie for the home's owner, signed with a key that lives only in this
// process. With single sign-on (ssologin.go), anyone the OIDC issuer
// authenticates gets the same cookie for their own subject and groups.
// Another account on the machine can reach the UI's port but has neither the
// login token nor a session, so every call the UI makes for it is refused.
// Restarting the server logs everyone out.
type Sessions struct {
	subject runspec.Subject
	login   string
	key     []byte
	now     func() time.Time
}

// NewSessions creates the login token and signing key for subject, the home's
// owner.
func NewSessions(subject runspec.Subject) (*Sessions, error) {
	login, key := make([]byte, 32), make([]byte, 32)
	if _, err := rand.Read(login); err != nil {
		return nil, fmt.Errorf("web UI login token: %w", err)
	}
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("web UI session key: %w", err)
	}
	subject.Verified = true
	return &Sessions{subject: subject, login: base64.RawURLEncoding.EncodeToString(login), key: key, now: time.Now}, nil
}

// LoginURL is the URL on base (the server's web endpoint) that logs a browser
// in and then sends it to next (a URL of the Web UI).
func (s *Sessions) LoginURL(base, next string) string {
	q := url.Values{"token": {s.login}}
	if next != "" {
		q.Set("next", next)
	}
	return base + "/login?" + q.Encode()
}

// serveLogin handles GET /login?token=…&next=…: a right token gets a session
// cookie and a redirect to next, which must be one of the allowed UI
// origins' pages (no open redirect); a wrong one gets 403.
func (s *Sessions) serveLogin(w http.ResponseWriter, r *http.Request, allowedNext func(*url.URL) bool) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	token := r.URL.Query().Get("token")
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.login)) != 1 {
		http.Error(w, "kumo: wrong or missing login token; use the login URL kumo server printed (also in $KUMO_HOME/server.json)", http.StatusForbidden)
		return
	}
	next, err := url.Parse(r.URL.Query().Get("next"))
	if err != nil || !allowedNext(next) {
		http.Error(w, "kumo: next is not a page of this server's Web UI", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: s.issue(), Path: "/", HttpOnly: true,
		// The UI and the codec endpoint are the same site on other ports:
		// Strict still sends the cookie to both, and never from another site.
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL / time.Second),
	})
	http.Redirect(w, r, next.String(), http.StatusSeeOther)
}

// issue signs a session of the home's owner that expires after sessionTTL.
func (s *Sessions) issue() string {
	v, _ := s.issueFor(s.subject, s.now().Add(sessionTTL)) // the owner's subject always encodes
	return v
}

// issueFor signs a session of subject (someone who logged in through the
// identity provider, or the owner) that expires at exp.
func (s *Sessions) issueFor(subject runspec.Subject, exp time.Time) (string, error) {
	who, err := json.Marshal(sessionSubject{Name: subject.Name, Groups: subject.Groups})
	if err != nil {
		return "", err
	}
	payload := "v2." + strconv.FormatInt(exp.Unix(), 10) + "." + base64.RawURLEncoding.EncodeToString(who)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.sign(payload)), nil
}

// sessionSubject is who a session is for, as the session cookie carries it.
type sessionSubject struct {
	Name   string   `json:"n"`
	Groups []string `json:"g,omitempty"`
}

func (s *Sessions) sign(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Verify finds the session cookie in a Cookie header (as a browser sends it,
// or as the UI server forwards it) and returns the owner's subject for a valid
// one. ErrNoSession: there is none; any other error: it is forged or expired.
func (s *Sessions) Verify(cookieHeader string) (runspec.Subject, error) {
	value := ""
	for _, c := range (&http.Request{Header: http.Header{"Cookie": {cookieHeader}}}).Cookies() {
		if c.Name == SessionCookie {
			value = c.Value
		}
	}
	if value == "" {
		return runspec.Subject{}, ErrNoSession
	}
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return runspec.Subject{}, errors.New("kumo session: malformed")
	}
	payload, sig := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.sign(payload)) {
		return runspec.Subject{}, errors.New("kumo session: not signed by this server (log in again with the URL kumo server printed)")
	}
	version, rest, _ := strings.Cut(payload, ".")
	expText, whoText, _ := strings.Cut(rest, ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || version != "v2" {
		return runspec.Subject{}, errors.New("kumo session: malformed")
	}
	if !s.now().Before(time.Unix(exp, 0)) {
		return runspec.Subject{}, errors.New("kumo session: expired (log in again)")
	}
	var who sessionSubject
	raw, err := base64.RawURLEncoding.DecodeString(whoText)
	if err != nil || json.Unmarshal(raw, &who) != nil || who.Name == "" {
		return runspec.Subject{}, errors.New("kumo session: malformed")
	}
	return runspec.Subject{Name: who.Name, Groups: who.Groups, Verified: true}, nil
}
