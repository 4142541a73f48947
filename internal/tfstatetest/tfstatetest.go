// Package tfstatetest is a Terraform http-backend state service for tests, as
// the protocol documents it: GET a state document (404 when there is none),
// POST or PUT it (with ?ID= of the lock when the document is locked, 409/423
// otherwise), DELETE it, and LOCK/UNLOCK it with a JSON lock info (423 with the
// holder's info when it is taken). GitLab's variant is served too: POST and
// DELETE on <document>/lock. Documents and locks are files in a temporary
// directory; requests must carry the basic auth or bearer token the server was
// started with.
//
//	srv := tfstatetest.Start(t, tfstatetest.Basic("kumo", "secret"))
//	d, err := tfhttp.NewDriver(ctx, srv.Options())
package tfstatetest

import (
	"bytes"
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend/tfhttp"
)

// Auth is what the server requires of every request.
type Auth struct{ User, Password, Token string }

// Basic requires basic auth with user and password.
func Basic(user, password string) Auth { return Auth{User: user, Password: password} }

// Bearer requires the bearer token.
func Bearer(token string) Auth { return Auth{Token: token} }

// Server is a running state service on 127.0.0.1.
type Server struct {
	// URL is the base of the documents: <URL>/<escaped name>.
	URL string
	// Dir holds one file per document (Dir/documents) and per lock (Dir/locks).
	Dir string

	auth     Auth
	srv      *httptest.Server
	mu       sync.Mutex
	requests atomic.Int64
	// Hook, when set, sees every request first and answers it when it returns true.
	Hook func(w http.ResponseWriter, r *http.Request) bool
}

const base = "/state/"

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB, auth Auth) *Server {
	t.Helper()
	s := &Server{Dir: t.TempDir(), auth: auth}
	for _, d := range []string{"documents", "locks", "tmp"} {
		if err := os.Mkdir(filepath.Join(s.Dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + strings.TrimSuffix(base, "/")
	return s
}

// Requests is how many requests the server has answered.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Options are the driver options that reach this server with its credentials.
func (s *Server) Options() tfhttp.Options {
	u, _ := url.Parse(s.URL)
	return tfhttp.Options{Base: u, Username: s.auth.User, Password: s.auth.Password, Token: s.auth.Token}
}

// Env is the environment (NAME=value) that gives the server's credentials to
// tfhttp.New, as a user sets it.
func (s *Server) Env() []string {
	if s.auth.Token != "" {
		return []string{"KUMO_HTTP_TOKEN=" + s.auth.Token, "TF_HTTP_USERNAME=", "TF_HTTP_PASSWORD="}
	}
	return []string{"TF_HTTP_USERNAME=" + s.auth.User, "TF_HTTP_PASSWORD=" + s.auth.Password, "KUMO_HTTP_TOKEN="}
}

func (s *Server) authorized(r *http.Request) bool {
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if s.auth.Token != "" {
		return eq(r.Header.Get("Authorization"), "Bearer "+s.auth.Token)
	}
	u, p, ok := r.BasicAuth()
	return ok && eq(u, s.auth.User) && eq(p, s.auth.Password)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.Hook != nil && s.Hook(w, r) {
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="state"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), base)
	if !ok {
		http.NotFound(w, r)
		return
	}
	method := r.Method
	if seg, isLock := strings.CutSuffix(rest, "/lock"); isLock {
		rest = seg
		switch method {
		case http.MethodPost:
			method = "LOCK"
		case http.MethodDelete:
			method = "UNLOCK"
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
	}
	name, err := url.PathUnescape(rest)
	if err != nil || name == "" || strings.Contains(rest, "/") {
		http.Error(w, "bad state name", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Documents and locks in two directories: no document name can be another's lock.
	file := filepath.Join(s.Dir, "documents", url.PathEscape(name))
	lockFile := filepath.Join(s.Dir, "locks", url.PathEscape(name))
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case http.MethodGet:
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	case http.MethodPost, http.MethodPut:
		if sum := r.Header.Get("Content-MD5"); sum != "" {
			got := md5.Sum(body)
			if sum != base64.StdEncoding.EncodeToString(got[:]) {
				http.Error(w, "Content-MD5 mismatch", http.StatusBadRequest)
				return
			}
		}
		if held, ok := readLock(lockFile); ok && held.ID != r.URL.Query().Get("ID") {
			writeLock(w, http.StatusLocked, held)
			return
		}
		if err := writeFile(file, body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		if held, ok := readLock(lockFile); ok && held.ID != r.URL.Query().Get("ID") {
			writeLock(w, http.StatusLocked, held)
			return
		}
		_ = os.Remove(file)
		w.WriteHeader(http.StatusOK)
	case "LOCK":
		var want lockInfo
		if err := json.Unmarshal(body, &want); err != nil || want.ID == "" {
			http.Error(w, "lock info without an ID", http.StatusBadRequest)
			return
		}
		if held, ok := readLock(lockFile); ok {
			writeLock(w, http.StatusLocked, held)
			return
		}
		if err := writeFile(lockFile, body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	case "UNLOCK":
		var want lockInfo
		_ = json.Unmarshal(body, &want)
		held, ok := readLock(lockFile)
		if !ok {
			w.WriteHeader(http.StatusOK)
			return
		}
		if held.ID != want.ID {
			writeLock(w, http.StatusConflict, held)
			return
		}
		_ = os.Remove(lockFile)
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

type lockInfo struct {
	ID  string `json:"ID"`
	raw []byte
}

func readLock(file string) (lockInfo, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return lockInfo{}, false
	}
	var l lockInfo
	_ = json.Unmarshal(data, &l)
	l.raw = data
	return l, true
}

func writeLock(w http.ResponseWriter, status int, l lockInfo) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(l.raw))
}

// writeFile replaces file whole (a reader never sees part of it).
func writeFile(file string, data []byte) error {
	f, err := os.CreateTemp(filepath.Join(filepath.Dir(filepath.Dir(file)), "tmp"), "write-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
