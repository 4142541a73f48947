package runpage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

// refusing is a Source that answers every run with err.
type refusing struct{ err error }

func (s refusing) Run(context.Context, string) (*client.RunDetails, *client.RunPlan, error) {
	return nil, nil, s.err
}

func (s refusing) Release(context.Context, string, string, int) (*engine.Release, error) {
	return nil, errors.New("no release should be read for a run that was not")
}

// TestRefusalsAreCleanPages: a run the caller may not see is a 403 page
// saying why, one that could not be read a 502; neither reads a release, and
// every page keeps its style to its nonce and stays out of caches.
func TestRefusalsAreCleanPages(t *testing.T) {
	id := "0f8e2c1a-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		err  error
		code int
		says string
	}{
		{fmt.Errorf("%w: local:bob may not read runs of shop/prod", ErrForbidden), http.StatusForbidden, "local:bob may not read runs of shop/prod"},
		{fmt.Errorf("%w: run %s", ErrNotFound, id), http.StatusNotFound, "There is no run " + id},
		{errors.New("frontend unavailable"), http.StatusBadGateway, "frontend unavailable"},
	} {
		rec := httptest.NewRecorder()
		New(refusing{tc.err}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path(id), nil))
		body := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(body, tc.says) || !strings.Contains(body, "</html>") {
			t.Errorf("%v: %d, want %d saying %q:\n%s", tc.err, rec.Code, tc.code, tc.says, body)
		}
		h := rec.Header()
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(body, `<style nonce="`) {
			t.Errorf("CSP %q", csp)
		}
		if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("headers %v", h)
		}
	}
	rec := httptest.NewRecorder()
	New(refusing{}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path(id), nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}
