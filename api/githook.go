package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/kumoproj/kumo/engine/gitsource"
)

// GitHookPath is where git hosts POST push events (kumo server's web
// endpoint routes it here: server.GitHookPath).
const GitHookPath = "/hooks/git"

// maxHookBody bounds a push event's body (GitHub sends at most 25 MB, but a
// push event of a configuration repository is a few kB).
const maxHookBody = 1 << 20

// GitHookTarget is what the webhook needs of kumo: the sources, and a way to
// make the sync schedules of a source tick now.
type GitHookTarget interface {
	Sources(ctx context.Context) ([]*gitsource.Source, error)
	// TriggerSourceSyncs makes every sync schedule of the source tick now
	// and returns their IDs.
	TriggerSourceSyncs(ctx context.Context, source string) ([]string, error)
}

// GitHook serves POST /hooks/git: a GitHub, GitLab or Gitea push event,
// signed with the secret of a source whose repository it names (GitHub's
// X-Hub-Signature-256 and Gitea's X-Gitea-Signature are HMAC-SHA256 of the
// body; GitLab's X-Gitlab-Token is the secret itself, compared in constant
// time), makes the sync schedules of that source tick at once. A delivery for
// a repository no source follows, or not signed with its secret, gets the
// same 404: the answer does not tell which repositories kumo follows.
type GitHook struct {
	Target GitHookTarget
	Logger *slog.Logger
}

// pushEvent is what the three hosts' push payloads have in common.
type pushEvent struct {
	Ref        string `json:"ref"`
	After      string `json:"after"`
	Repository struct {
		CloneURL   string `json:"clone_url"`    // GitHub, Gitea
		SSHURL     string `json:"ssh_url"`      // GitHub, Gitea
		HTMLURL    string `json:"html_url"`     // GitHub, Gitea
		GitHTTPURL string `json:"git_http_url"` // GitLab
		GitSSHURL  string `json:"git_ssh_url"`  // GitLab
	} `json:"repository"`
}

func (e *pushEvent) urls() []string {
	r := e.Repository
	return []string{r.CloneURL, r.SSHURL, r.HTMLURL, r.GitHTTPURL, r.GitSSHURL}
}

func (h *GitHook) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func (h *GitHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a push event", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHookBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		http.Error(w, fmt.Sprintf("a push event of at most %d bytes", maxHookBody), http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	notFound := func(why string) {
		h.logger().Warn("git webhook refused", "remote", r.RemoteAddr, "why", why)
		http.Error(w, "no source accepts this delivery", http.StatusNotFound)
	}
	var ev pushEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "the body is not a push event (JSON): "+err.Error(), http.StatusBadRequest)
		return
	}
	sources, err := h.Target.Sources(r.Context())
	if err != nil {
		h.logger().Error("git webhook: reading the sources", "err", err)
		http.Error(w, "kumo could not read its sources", http.StatusInternalServerError)
		return
	}
	var matched []*gitsource.Source
	for _, s := range sources {
		if s.WebhookSecretFile == "" || !anySame(s.URL, ev.urls()) {
			continue
		}
		secret, err := hookSecret(s.WebhookSecretFile)
		if err != nil {
			h.logger().Error("git webhook: the secret of source "+s.Name, "err", err)
			continue
		}
		if signed(r.Header, body, secret) {
			matched = append(matched, s)
		}
	}
	if len(matched) == 0 {
		notFound("no source follows the repository with a secret that verifies the delivery")
		return
	}
	var triggered, ignored []string
	for _, s := range matched {
		if !refMatches(s.Ref, ev.Ref) {
			ignored = append(ignored, s.Name)
			continue
		}
		ids, err := h.Target.TriggerSourceSyncs(r.Context(), s.Name)
		if err != nil {
			h.logger().Error("git webhook: triggering the syncs of source "+s.Name, "err", err)
			http.Error(w, "triggering the syncs of source "+s.Name+" failed", http.StatusBadGateway)
			return
		}
		triggered = append(triggered, ids...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"triggered": triggered, "ignoredSources": ignored, "ref": ev.Ref, "after": ev.After})
}

func anySame(u string, others []string) bool {
	for _, o := range others {
		if o != "" && gitsource.SameRepository(u, o) {
			return true
		}
	}
	return false
}

// refMatches: a push to refs/heads/R or refs/tags/R is one to a source
// following R (or the full ref R).
func refMatches(sourceRef, pushed string) bool {
	return pushed == sourceRef || pushed == "refs/heads/"+sourceRef || pushed == "refs/tags/"+sourceRef
}

// hookSecret reads a source's webhook secret file.
func hookSecret(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	secret := []byte(strings.TrimSpace(string(data)))
	if len(secret) < 16 {
		return nil, fmt.Errorf("%s: a webhook secret needs at least 16 characters", file)
	}
	return secret, nil
}

// signed checks the delivery's signature header against secret, whichever
// host sent it; no header, no match.
func signed(hdr http.Header, body, secret []byte) bool {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	sum := mac.Sum(nil)
	if v := hdr.Get("X-Hub-Signature-256"); v != "" {
		got, err := hex.DecodeString(strings.TrimPrefix(v, "sha256="))
		return err == nil && strings.HasPrefix(v, "sha256=") && hmac.Equal(got, sum)
	}
	if v := hdr.Get("X-Gitea-Signature"); v != "" {
		got, err := hex.DecodeString(v)
		return err == nil && hmac.Equal(got, sum)
	}
	if v := hdr.Get("X-Gitlab-Token"); v != "" {
		return subtle.ConstantTimeCompare([]byte(v), secret) == 1
	}
	return false
}
