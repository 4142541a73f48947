package hydratest

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// startLoginUI serves Hydra's login and consent pages for a browser, as an
// identity provider's operator's login UI would: the login page asks for a
// user name and accepts one of users (no password: the test's users are
// who the test says), the consent page grants what the client asked and
// adds the user's claims to the ID token. Both talk to Hydra's admin API. It
// returns the UI's base URL.
func (s *Server) startLoginUI(t testing.TB, users []User) string {
	byName := map[string]User{}
	for _, u := range users {
		byName[u.Subject] = u
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		challenge := r.URL.Query().Get("login_challenge")
		var req struct {
			Skip    bool   `json:"skip"`
			Subject string `json:"subject"`
		}
		if err := s.adminCall(http.MethodGet, "/admin/oauth2/auth/requests/login", url.Values{"login_challenge": {challenge}}, nil, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if req.Skip { // Hydra remembers this browser's user
			s.acceptLogin(w, r, challenge, req.Subject)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Log in</title><form method="post" action="/login">
<input type="hidden" name="challenge" value="%s">
<label>User <input id="username" name="username" autofocus></label>
<button id="login" type="submit">Log in</button></form>`, html.EscapeString(challenge))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		u, ok := byName[r.PostFormValue("username")]
		if !ok {
			http.Error(w, "unknown user", http.StatusForbidden)
			return
		}
		s.acceptLogin(w, r, r.PostFormValue("challenge"), u.Subject)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		challenge := r.URL.Query().Get("consent_challenge")
		var req struct {
			Subject  string   `json:"subject"`
			Scope    []string `json:"requested_scope"`
			Audience []string `json:"requested_access_token_audience"`
		}
		q := url.Values{"consent_challenge": {challenge}}
		if err := s.adminCall(http.MethodGet, "/admin/oauth2/auth/requests/consent", q, nil, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		u, ok := byName[req.Subject]
		if !ok {
			http.Error(w, "unknown user", http.StatusForbidden)
			return
		}
		var next struct {
			RedirectTo string `json:"redirect_to"`
		}
		if err := s.adminCall(http.MethodPut, "/admin/oauth2/auth/requests/consent/accept", q, map[string]any{
			"grant_scope": req.Scope, "grant_access_token_audience": req.Audience,
			"session": map[string]any{"id_token": u.idClaims()},
		}, &next); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		http.Redirect(w, r, next.RedirectTo, http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// acceptLogin tells Hydra that subject logged in, and sends the browser on.
func (s *Server) acceptLogin(w http.ResponseWriter, r *http.Request, challenge, subject string) {
	var next struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := s.adminCall(http.MethodPut, "/admin/oauth2/auth/requests/login/accept", url.Values{"login_challenge": {challenge}},
		map[string]any{"subject": subject}, &next); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, next.RedirectTo, http.StatusFound)
}
