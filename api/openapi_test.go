package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/runspec"
)

// newTestAPI is an API over a client of an empty home, whose authenticator
// refuses everyone: every route answers 401, a path no route serves 404.
func newTestAPI(t *testing.T) *API {
	t.Helper()
	kc, err := client.Open(client.Options{Home: t.TempDir(), InsecurePlaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Close() })
	a, err := New(Options{Client: kc, Policy: authz.OwnerOnly("owner"), Authenticate: func(*http.Request) (runspec.Subject, error) {
		return runspec.Subject{}, errors.New("nobody is let in here")
	}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOpenAPIDocument: the served document is valid OpenAPI 3 (kin-openapi),
// every operation in it is served (it answers, unauthenticated, 401 and not
// the router's 404 or 405), and a path or method it lacks is not served.
func TestOpenAPIDocument(t *testing.T) {
	a := newTestAPI(t)
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Header())
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("load the document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3: %v", err)
	}

	param := regexp.MustCompile(`\{[a-z]+\}`)
	served := 0
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			// Any value reaches the handler; the authenticator refuses first.
			url := param.ReplaceAllString(path, "1")
			rec := httptest.NewRecorder()
			a.ServeHTTP(rec, httptest.NewRequest(method, url, strings.NewReader("{}")))
			var p Problem
			_ = json.Unmarshal(rec.Body.Bytes(), &p)
			if rec.Code != http.StatusUnauthorized || p.Type != ProblemUnauthenticated {
				t.Errorf("%s %s is in the document but answers %d %s, not the 401 of a served route", method, url, rec.Code, p.Type)
			}
			served++
		}
	}
	if served != len(routes) {
		t.Errorf("the document has %d operations, the route table %d", served, len(routes))
	}
	// What the document lacks is not served.
	for _, probe := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/api/v1/nothing", http.StatusNotFound},
		{http.MethodGet, "/api/v2/runs", http.StatusNotFound},
		{http.MethodDelete, "/api/v1/runs/1", http.StatusMethodNotAllowed},
		{http.MethodPut, "/api/v1/runs", http.StatusMethodNotAllowed},
		{http.MethodGet, "/api/v1/runs/1/approve", http.StatusMethodNotAllowed},
		{http.MethodGet, "/runs/1", http.StatusNotFound}, // no run pages mounted
	} {
		if item := doc.Paths.Find(probe.path); item != nil && item.GetOperation(probe.method) != nil {
			t.Errorf("%s %s is in the document", probe.method, probe.path)
		}
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(probe.method, probe.path, nil))
		if rec.Code != probe.want || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d %s, want %d problem+json", probe.method, probe.path, rec.Code, rec.Header().Get("Content-Type"), probe.want)
		}
	}
}

// TestDocsPage: /docs is a page of the binary's that loads nothing from
// elsewhere: no URL in it but this server's paths, and a policy that lets
// it connect to this server only.
func TestDocsPage(t *testing.T) {
	a := newTestAPI(t)
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", rec.Code, rec.Header())
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).FindString(rec.Body.String()); m != "" {
		t.Errorf("the page loads from another host: %s", m)
	}
	if !strings.Contains(rec.Body.String(), `fetch("/openapi.json")`) {
		t.Error("the page does not read the document")
	}
}

// TestRunPagesNeedACaller: the run pages are passed on only for an
// authenticated caller, whom the page handler gets from Caller.
func TestRunPagesNeedACaller(t *testing.T) {
	kc, err := client.Open(client.Options{Home: t.TempDir(), InsecurePlaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := Caller(r.Context())
		if !ok {
			http.Error(w, "no caller", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("page for " + s.Name))
	})
	a, err := New(Options{Client: kc, Policy: authz.OwnerOnly("owner"), Pages: pages, Authenticate: func(r *http.Request) (runspec.Subject, error) {
		if r.Header.Get("Authorization") == "Bearer good" {
			return runspec.Subject{Name: "token:ci"}, nil
		}
		return runspec.Subject{}, errors.New("no credential")
	}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/runs/abc", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("a run page without a credential: %d, want 401", rec.Code)
	}
	req := httptest.NewRequest(http.MethodGet, "/runs/abc", nil)
	req.Header.Set("Authorization", "Bearer good")
	rec = httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "page for token:ci" {
		t.Errorf("a run page with a credential: %d %s", rec.Code, rec.Body)
	}
	if _, ok := Caller(context.Background()); ok {
		t.Error("Caller found a subject in a context the API did not make")
	}
}
