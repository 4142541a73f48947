package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/internal/keyring"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
	"github.com/kumoproj/kumo/server/oidc"
)

// webEndpoint is kumo server's own HTTP listener beside the Web UI: /login,
// which logs the home's owner in to the UI (session.go), and the Temporal
// codec server protocol (/decode, /encode, also under /<namespace>/), through
// which the UI shows payloads decrypted. Whoever may call the codec can read
// every payload, so it answers only callers that authenticate: a browser with
// a session, or a bearer credential the server's verifiers accept.
type webEndpoint struct {
	url      string
	sessions *Sessions
	codec    *codec.Handler // nil: the codec is off
	http     http.Handler   // nil: no HTTP API (Options.HTTP)
	hook     http.Handler   // nil: no git webhook (Options.GitHook)
	bearers  []BearerVerifier
	sso      *oidc.Login // nil: no single sign-on (ssologin.go)
	srv      *http.Server
	done     chan struct{}

	mu        sync.RWMutex
	uiOrigins map[string]bool
	landing   string // the UI page a login ends on by default
}

// BearerVerifier checks a bearer credential (an OIDC token, a token kumo
// issued) and returns whose it is: the same verifiers serve the frontend
// (server/auth) and the web endpoint.
type BearerVerifier = auth.BearerVerifier

// startWebEndpoint listens on address (host:port, port 0 for any free one).
// keys nil: no codec; sso nil: no single sign-on; api nil: no HTTP API
// (Options.HTTP).
func startWebEndpoint(address string, sessions *Sessions, keys *keyring.Ring, bearers []BearerVerifier, sso *SSO, api http.Handler) (*webEndpoint, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("codec endpoint address %s is not available (in use by another program?): %w", address, err)
	}
	we := &webEndpoint{
		url: "http://" + l.Addr().String(), sessions: sessions, bearers: bearers, http: api,
		done: make(chan struct{}), uiOrigins: map[string]bool{},
	}
	if sso != nil {
		callback := sso.CallbackURL
		if callback == "" {
			callback = we.url + SSOCallbackPath
		}
		if we.sso, err = sso.Verifier.Login(sso.ClientSecret, callback); err != nil {
			_ = l.Close()
			return nil, err
		}
	}
	if keys != nil {
		we.codec = codec.NewHandler(keys)
	}
	we.srv = &http.Server{Handler: we, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(we.done)
		if err := we.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is gone: requests fail, the server goes on
		}
	}()
	return we, nil
}

func (we *webEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/login":
		we.sessions.serveLogin(w, r, we.uiPage)
		return
	case r.URL.Path == SSOLoginPath && we.sso != nil:
		we.serveSSOLogin(w, r)
		return
	case r.URL.Path == SSOCallbackPath && we.sso != nil:
		we.serveSSOCallback(w, r)
		return
	case r.URL.Path == GitHookPath && we.hook != nil:
		we.hook.ServeHTTP(w, r) // authenticated by the delivery's signature
		return
	}
	if we.http != nil && httpAPIPath(r.URL.Path) {
		// The handler authenticates each request itself, with this
		// endpoint's sessions and verifiers (RequestAuthenticator), so that
		// it can answer in its own format.
		ctx := context.WithValue(r.Context(), authenticatorKey{}, Authenticator(we.authenticate))
		we.http.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	if we.codec == nil {
		http.NotFound(w, r)
		return
	}
	// A browser's preflight carries no credentials: the codec handler answers
	// it for allowed origins only.
	if r.Method != http.MethodOptions {
		if _, err := we.authenticate(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kumo"`)
			http.Error(w, "kumo codec endpoint: "+err.Error(), http.StatusUnauthorized)
			return
		}
	}
	we.codec.ServeHTTP(w, r)
}

// GitHookPath is where the git webhook (Options.GitHook) is served.
const GitHookPath = "/hooks/git"

// httpAPIPath reports whether path is Options.HTTP's: the API, its
// document and docs page, and the run pages.
func httpAPIPath(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/runs/") || path == "/openapi.json" || path == "/docs"
}

// Authenticator finds who sends an HTTP request, from its bearer credential
// or its Web UI session cookie; an error says why nobody is.
type Authenticator func(*http.Request) (runspec.Subject, error)

type authenticatorKey struct{}

// RequestAuthenticator is the authenticator of the kumo server web endpoint
// that passed ctx's request to Options.HTTP: the same sessions and bearer
// verifiers as the codec and the frontend. nil when no web endpoint did.
func RequestAuthenticator(ctx context.Context) Authenticator {
	a, _ := ctx.Value(authenticatorKey{}).(Authenticator)
	return a
}

// BearerAuthenticator authenticates a request's "Authorization: Bearer"
// credential with verifiers, for an HTTP endpoint without Web UI sessions
// (`kumo api`).
func BearerAuthenticator(verifiers []BearerVerifier) Authenticator {
	return func(r *http.Request) (runspec.Subject, error) {
		if r.Header.Get("Authorization") == "" {
			return runspec.Subject{}, errors.New("authentication required: send an \"Authorization: Bearer\" credential (a kumo token or an OIDC token)")
		}
		return verifyBearer(r, verifiers)
	}
}

func verifyBearer(r *http.Request, verifiers []BearerVerifier) (runspec.Subject, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return runspec.Subject{}, errors.New("the Authorization header is not a bearer credential")
	}
	if len(verifiers) == 0 {
		return runspec.Subject{}, errors.New("this server accepts no bearer credentials (no OIDC issuer, no kumo tokens)")
	}
	var errs []error
	for _, v := range verifiers {
		s, err := v.Verify(r.Context(), token)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return runspec.Subject{}, fmt.Errorf("bearer credential refused: %w", errors.Join(errs...))
}

// authenticate accepts a session cookie or a bearer credential.
func (we *webEndpoint) authenticate(r *http.Request) (runspec.Subject, error) {
	if r.Header.Get("Authorization") != "" {
		return verifyBearer(r, we.bearers)
	}
	s, err := we.sessions.Verify(r.Header.Get("Cookie"))
	if errors.Is(err, ErrNoSession) {
		return s, errors.New("authentication required: log in to the Web UI (the owner with the URL kumo server printed, others at " + SSOLoginPath + " when single sign-on is on), or send a bearer credential")
	}
	return s, err
}

// uiPage reports whether u is a page of the Web UI this endpoint serves.
func (we *webEndpoint) uiPage(u *url.URL) bool {
	we.mu.RLock()
	defer we.mu.RUnlock()
	return u.Scheme != "" && we.uiOrigins[u.Scheme+"://"+u.Host]
}

func (we *webEndpoint) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = we.srv.Shutdown(ctx)
	<-we.done
}

// landingPage is the UI page a login ends on when it names none.
func (we *webEndpoint) landingPage() string {
	we.mu.RLock()
	defer we.mu.RUnlock()
	return we.landing
}

// allowUI lets the Web UI at uiURL call the codec from the browser, and login
// send browsers to it, under any of the loopback names it may be opened by
// when it listens on loopback; landing is the page a login ends on by
// default.
func (we *webEndpoint) allowUI(uiURL, landing string) {
	origins := []string{uiURL}
	if u, err := url.Parse(uiURL); err == nil {
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() {
			for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
				origins = append(origins, u.Scheme+"://"+h+":"+u.Port())
			}
		}
	}
	we.mu.Lock()
	defer we.mu.Unlock()
	we.landing = landing
	for _, o := range origins {
		we.uiOrigins[o] = true
		if we.codec != nil {
			we.codec.AllowOrigin(o)
		}
	}
}
