package tfhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/tfhttp"
	"github.com/kumoproj/kumo/internal/tfstatetest"
)

var ctx = context.Background()

// TestConformanceBasic runs the conformance suite against the protocol server
// with basic auth, Terraform's default methods (LOCK/UNLOCK, POST).
func TestConformanceBasic(t *testing.T) {
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		srv := tfstatetest.Start(t, tfstatetest.Basic("kumo", "pw-1"))
		d, err := tfhttp.NewDriver(ctx, srv.Options())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// TestConformanceGitLabStyle: a bearer token, PUT updates, and locks at
// <document>/lock with POST and DELETE, as GitLab serves them.
func TestConformanceGitLabStyle(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite's second run over the protocol; TestConformanceBasic runs with -short")
	}
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		srv := tfstatetest.Start(t, tfstatetest.Bearer("tok-1"))
		o := srv.Options()
		o.UpdateMethod, o.LockMethod, o.UnlockMethod, o.LockSuffix = http.MethodPut, http.MethodPost, http.MethodDelete, "/lock"
		d, err := tfhttp.NewDriver(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseURL(t *testing.T) {
	o, err := tfhttp.ParseURL("https://state.example/api/kumo/?lock_method=POST&unlock_method=DELETE&lock_suffix=/lock",
		env(map[string]string{"TF_HTTP_USERNAME": "u", "TF_HTTP_PASSWORD": "p"}))
	if err != nil {
		t.Fatal(err)
	}
	if o.Base.String() != "https://state.example/api/kumo" || o.LockMethod != "POST" || o.UnlockMethod != "DELETE" || o.LockSuffix != "/lock" || o.Username != "u" || o.Password != "p" {
		t.Fatalf("%+v", o)
	}
	pwFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(pwFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, err := tfhttp.ParseURL("https://s.example/x", env(map[string]string{"KUMO_HTTP_TOKEN_FILE": pwFile})); err != nil || o.Token != "tok" {
		t.Fatalf("token from a file: %+v, %v", o, err)
	}
	for raw, want := range map[string]string{
		"https://u:s3cret@s.example/x":       "holds a password",
		"http://s.example/x":                 "plain http",
		"https://s.example/x?bogus=1":        `unknown option "bogus"`,
		"https://s.example/x?lock_suffix=no": "lock_suffix",
		"ftp://s.example/x":                  "want https://host/path",
	} {
		e := map[string]string{"TF_HTTP_USERNAME": "u", "TF_HTTP_PASSWORD": "p"}
		_, err := tfhttp.ParseURL(raw, env(e))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error prints the password: %v", raw, err)
		}
	}
	both := map[string]string{"TF_HTTP_USERNAME": "u", "TF_HTTP_PASSWORD": "p", "KUMO_HTTP_TOKEN": "t"}
	if _, err := tfhttp.ParseURL("https://s.example/x", env(both)); err == nil || !strings.Contains(err.Error(), "set one") {
		t.Errorf("basic auth and a token: %v", err)
	}
	// Plain http is fine without credentials, and with them on loopback.
	if _, err := tfhttp.ParseURL("http://127.0.0.1:8080/x", env(map[string]string{})); err != nil {
		t.Error(err)
	}
}

// TestWrongCredentials: New fails at once, naming the service and what to check.
func TestWrongCredentials(t *testing.T) {
	srv := tfstatetest.Start(t, tfstatetest.Basic("kumo", "right"))
	o := srv.Options()
	o.Password = "wrong"
	_, err := tfhttp.NewDriver(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "Unauthorized") || !strings.Contains(err.Error(), "TF_HTTP_PASSWORD") || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("the error prints the password: %v", err)
	}
}

// TestOneWinnerUnderTheLock: twenty writers creating the same key at once
// through separate drivers: exactly one wins, and the index lists it once.
func TestOneWinnerUnderTheLock(t *testing.T) {
	srv := tfstatetest.Start(t, tfstatetest.Bearer("t"))
	var wins, exists atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := tfhttp.NewDriver(ctx, srv.Options())
			if err != nil {
				t.Error(err)
				return
			}
			_, err = d.Write(ctx, "releases/p/w/2.yaml", []byte{byte(i)}, backend.Condition{CreateOnly: true})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, backend.ErrExists):
				exists.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || exists.Load() != 19 {
		t.Fatalf("%d wins, %d refused, want 1 and 19", wins.Load(), exists.Load())
	}
	d, _ := tfhttp.NewDriver(ctx, srv.Options())
	ents, err := d.List(ctx, "releases/p/w")
	if err != nil || len(ents) != 1 || ents[0].Name != "2.yaml" {
		t.Fatalf("listing: %v, %v", ents, err)
	}
	locks, _ := os.ReadDir(filepath.Join(srv.Dir, "locks"))
	if len(locks) != 0 {
		t.Fatalf("locks left behind: %v", locks)
	}
}

// TestStaleLock: a lock kumo left (its holder died) is broken once stale; a
// lock another tool holds is waited on, and the error names the holder.
func TestStaleLock(t *testing.T) {
	srv := tfstatetest.Start(t, tfstatetest.Bearer("t"))
	d, err := tfhttp.NewDriver(ctx, srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	lockOf := func(name string) string { return filepath.Join(srv.Dir, "locks", url.PathEscape(name)) }
	write := func(path string, v any) {
		data, _ := json.Marshal(v)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(lockOf("!index:specs"), map[string]any{"ID": "dead", "Operation": "kumo-write", "Who": "kumo@gone", "Created": time.Now().Add(-time.Hour)})
	if _, err := d.Write(ctx, "specs/a.yaml", []byte("x"), backend.Condition{}); err != nil {
		t.Fatalf("a stale kumo lock was not broken: %v", err)
	}
	write(lockOf("!index:specs"), map[string]any{"ID": "tf", "Operation": "OperationTypeApply", "Who": "alice@laptop", "Created": time.Now().Add(-time.Hour)})
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = d.Write(short, "specs/b.yaml", []byte("x"), backend.Condition{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a lock held by Terraform: %v, want the deadline", err)
	}
	if _, _, err := d.Read(ctx, "specs/b.yaml"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("the refused write wrote: %v", err)
	}
}

// TestRetriesServerErrors: a 503 answer is retried, and the write is done once.
func TestRetriesServerErrors(t *testing.T) {
	srv := tfstatetest.Start(t, tfstatetest.Bearer("t"))
	d, err := tfhttp.NewDriver(ctx, srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	srv.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && failed.Add(1) <= 2 {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	if _, err := d.Write(ctx, "runs/r/1.log", []byte("hello"), backend.Condition{CreateOnly: true}); err != nil {
		t.Fatal(err)
	}
	if data, _, err := d.Read(ctx, "runs/r/1.log"); err != nil || string(data) != "hello" {
		t.Fatalf("%q, %v", data, err)
	}
}
