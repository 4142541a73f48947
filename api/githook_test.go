package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/gitsource"
)

type hookTarget struct {
	sources   []*gitsource.Source
	triggered []string
}

func (h *hookTarget) Sources(context.Context) ([]*gitsource.Source, error) { return h.sources, nil }

func (h *hookTarget) TriggerSourceSyncs(_ context.Context, source string) ([]string, error) {
	h.triggered = append(h.triggered, source)
	return []string{"kumo-sync/p/" + source}, nil
}

// TestGitHookSignatures: GitHub's, Gitea's and GitLab's ways of signing are
// checked against the secret of the source whose repository the delivery
// names; a wrong or missing signature and an unknown repository get the
// same 404 and trigger nothing; a push to another ref triggers nothing; a
// body over the limit is refused.
func TestGitHookSignatures(t *testing.T) {
	secret := "0123456789abcdef-secret"
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := &hookTarget{sources: []*gitsource.Source{
		{Name: "shop", URL: "https://git.example.com/team/shop.git", Ref: "main", WebhookSecretFile: file},
		{Name: "nosecret", URL: "https://git.example.com/team/other.git", Ref: "main"},
	}}
	h := &GitHook{Target: target, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	body := `{"ref":"refs/heads/main","after":"abc","repository":{"clone_url":"https://git.example.com/team/shop.git","git_http_url":"https://git.example.com/team/shop.git"}}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	sig := hex.EncodeToString(mac.Sum(nil))
	post := func(body string, hdr map[string]string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, GitHookPath, strings.NewReader(body))
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for name, hdr := range map[string]map[string]string{
		"github": {"X-Hub-Signature-256": "sha256=" + sig},
		"gitea":  {"X-Gitea-Signature": sig},
		"gitlab": {"X-Gitlab-Token": secret},
	} {
		target.triggered = nil
		if code, out := post(body, hdr); code != http.StatusAccepted || !slices.Equal(target.triggered, []string{"shop"}) {
			t.Errorf("%s: %d %s, triggered %v", name, code, out, target.triggered)
		}
	}
	target.triggered = nil
	wrong := strings.Repeat("0", len(sig))
	_, refused := post(body, map[string]string{"X-Hub-Signature-256": "sha256=" + wrong})
	for name, c := range map[string]struct {
		body string
		hdr  map[string]string
	}{
		"wrong github":   {body, map[string]string{"X-Hub-Signature-256": "sha256=" + wrong}},
		"no sha256=":     {body, map[string]string{"X-Hub-Signature-256": sig}},
		"wrong gitlab":   {body, map[string]string{"X-Gitlab-Token": secret + "x"}},
		"unsigned":       {body, nil},
		"unknown repo":   {strings.ReplaceAll(body, "team/shop", "team/nope"), map[string]string{"X-Hub-Signature-256": "sha256=" + sig}},
		"source without": {strings.ReplaceAll(body, "team/shop", "team/other"), map[string]string{"X-Gitlab-Token": secret}},
	} {
		code, out := post(c.body, c.hdr)
		if code != http.StatusNotFound || out != refused {
			t.Errorf("%s: %d %q, want the same 404 as every refusal (%q)", name, code, out, refused)
		}
	}
	other := strings.Replace(body, "refs/heads/main", "refs/heads/feature", 1)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(other))
	if code, out := post(other, map[string]string{"X-Gitea-Signature": hex.EncodeToString(m.Sum(nil))}); code != http.StatusAccepted || !strings.Contains(out, `"ignoredSources":["shop"]`) {
		t.Errorf("another ref: %d %s", code, out)
	}
	if len(target.triggered) != 0 {
		t.Errorf("refused deliveries triggered %v", target.triggered)
	}
	if code, _ := post(`{"pad":"`+strings.Repeat("x", maxHookBody)+`"}`, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized body: %d", code)
	}
	r := httptest.NewRequest(http.MethodGet, GitHookPath, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", w.Code)
	}
}
