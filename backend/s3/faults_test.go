package s3_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/engine"
)

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Has("list-type")
}

// TestLatestWithoutListing: with every listing refused, releases are still
// created, read, found as latest and listed, and a second machine sees them.
func TestLatestWithoutListing(t *testing.T) {
	b, f := newFake(t, "kumo")
	f.setHook(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		if isList(r) {
			http.Error(w, "listing is off in this test", http.StatusForbidden)
			return true
		}
		return false
	})
	for rev := 1; rev <= 21; rev++ {
		r := backendtest.Release("p", "w", rev)
		if err := b.CreateRelease(ctx, r); err != nil {
			t.Fatalf("create %d: %v", rev, err)
		}
		if err := b.PutStateEntry(ctx, backend.KeyOf(r), backend.StateEntry{ID: "v1:Namespace:x", Deleted: true}); err != nil {
			t.Fatal(err)
		}
		r.Phase = engine.PhaseSucceeded
		if err := b.UpdateRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	other, err := newBackend(f, "kumo")
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range []backend.Backend{b, other} {
		latest, err := be.LatestRelease(ctx, "p", "w")
		if err != nil || latest.Revision != 21 || latest.Phase != engine.PhaseSucceeded {
			t.Fatalf("LatestRelease: %v, %v; want revision 21, succeeded", latest, err)
		}
		list, err := be.ListReleases(ctx, "p", "w")
		if err != nil || len(list) != 21 || list[20].Revision != 21 {
			t.Fatalf("ListReleases: %d, %v", len(list), err)
		}
	}
	if err := other.CreateRelease(ctx, backendtest.Release("p", "w", 21)); !errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("second machine creating 21 again: %v", err)
	}
	if err := other.CreateRelease(ctx, backendtest.Release("p", "w", 23)); err == nil || !strings.Contains(err.Error(), "latest revision of p/w is 21") {
		t.Fatalf("a gap: %v", err)
	}
}

// TestLatestHint: a missing, stale, garbage or runaway hint costs requests, not
// the right answer; a current one makes LatestRelease four requests however
// many revisions there are (and one for the release's spec, stored apart):
// the hint, the release it names, whether the next exists, and the floor (a
// hint under it may name a revision whose successor a collection removed).
func TestLatestHint(t *testing.T) {
	b, f := newFake(t, "kumo")
	for rev := 1; rev <= 37; rev++ {
		if err := b.CreateRelease(ctx, backendtest.Release("p", "w", rev)); err != nil {
			t.Fatal(err)
		}
	}
	hint := "kumo/releases/p/w/.latest"
	requests := f.count()
	if latest, err := b.LatestRelease(ctx, "p", "w"); err != nil || latest.Revision != 37 {
		t.Fatalf("LatestRelease: %v, %v", latest, err)
	}
	if got := requests(); len(got) != 5 {
		t.Fatalf("LatestRelease with a current hint made %d requests, want 5 (hint, release, its spec, next, floor): %q", len(got), got)
	}
	for _, h := range []string{"1", "36", "999", "0", "-3", "x", ""} {
		f.putRaw(t, hint, h)
		requests := f.count()
		latest, err := b.LatestRelease(ctx, "p", "w")
		if err != nil || latest.Revision != 37 {
			t.Fatalf("LatestRelease with hint %q: %v, %v", h, latest, err)
		}
		if n := len(requests()); n > 20 {
			t.Fatalf("LatestRelease with hint %q made %d requests", h, n)
		}
	}
	f.deleteRaw(t, hint)
	if latest, err := b.LatestRelease(ctx, "p", "w"); err != nil || latest.Revision != 37 {
		t.Fatalf("LatestRelease without a hint: %v, %v", latest, err)
	}
	// Creating the next revision puts the hint right again.
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 38)); err != nil {
		t.Fatal(err)
	}
	requests = f.count()
	if latest, err := b.LatestRelease(ctx, "p", "w"); err != nil || latest.Revision != 38 || len(requests()) != 5 {
		t.Fatalf("LatestRelease after a create: %v, %v, %d requests", latest, err, len(requests()))
	}
}

// TestRetriesServerErrors: throttling and 5xx answers are retried.
func TestRetriesServerErrors(t *testing.T) {
	b, f := newFake(t, "kumo")
	var n atomic.Int32
	f.setHook(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		// Every request fails twice before it gets through: 503 SlowDown, then 500.
		switch n.Add(1) % 3 {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<Error><Code>SlowDown</Code><Message>reduce your request rate</Message></Error>`)
			return true
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<Error><Code>InternalError</Code><Message>oops</Message></Error>`)
			return true
		}
		return false
	})
	r := backendtest.Release("p", "w", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatalf("CreateRelease through errors: %v", err)
	}
	r.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, r); err != nil {
		t.Fatalf("UpdateRelease through errors: %v", err)
	}
	got, err := b.LatestRelease(ctx, "p", "w")
	if err != nil || got.Phase != engine.PhaseSucceeded {
		t.Fatalf("LatestRelease through errors: %v, %v", got, err)
	}
}

// TestLostResponses: a conditional write that succeeds on the server but whose
// response is lost is retried by the SDK and refused by the server; the backend
// recognises its own write and reports success, so one create makes exactly one
// revision and an update is not reported as a conflict.
func TestLostResponses(t *testing.T) {
	b, f := newFake(t, "kumo")
	var lost atomic.Int32
	f.setHook(func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		conditional := r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Match") != ""
		if r.Method != http.MethodPut || !conditional || lost.Add(1)%2 == 0 {
			return false
		}
		next.ServeHTTP(httptest.NewRecorder(), r) // done, but the answer is lost
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	r := backendtest.Release("p", "w", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatalf("CreateRelease with a lost response: %v", err)
	}
	r.Phase = engine.PhaseFailed
	if err := b.UpdateRelease(ctx, r); err != nil {
		t.Fatalf("UpdateRelease with a lost response: %v", err)
	}
	if err := b.CreateWorkspace(ctx, backendtest.Workspace("dev")); err != nil {
		t.Fatalf("CreateWorkspace with a lost response: %v", err)
	}
	if lost.Load() < 6 {
		t.Fatalf("only %d conditional requests seen: the responses were not lost", lost.Load())
	}
	f.setHook(nil)
	got, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil || got.Phase != engine.PhaseFailed || got.Version != r.Version {
		t.Fatalf("stored release: %v, %v (version %q, want %q)", got, err, got.Version, r.Version)
	}
	// Another writer's identical create is still refused.
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 1)); !errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("CreateRelease of an existing revision: %v", err)
	}
	if err := b.CreateWorkspace(ctx, backendtest.Workspace("dev")); !errors.Is(err, backend.ErrExists) {
		t.Fatalf("CreateWorkspace of an existing workspace: %v", err)
	}
}

// TestHardFailureLeavesNothing: when every attempt of a write fails, the error
// names the release and the object, and no revision appears.
func TestHardFailureLeavesNothing(t *testing.T) {
	b, f := newFake(t, "kumo")
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 1)); err != nil {
		t.Fatal(err)
	}
	f.setHook(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		// The release file's write fails (its spec is written before it).
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/releases/p/w/2.yaml") {
			return false
		}
		// The connection breaks half-way through the body.
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("no hijacker")
			return false
		}
		if _, err := r.Body.Read(make([]byte, 100)); err != nil {
			t.Errorf("read the start of the body: %v", err)
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			t.Error(err)
			return false
		}
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
		return true
	})
	err := b.CreateRelease(ctx, backendtest.Release("p", "w", 2))
	if err == nil || !strings.Contains(err.Error(), "p/w#2") || !strings.Contains(err.Error(), "s3://kumo-test/kumo/releases/p/w/2.yaml") {
		t.Fatalf("CreateRelease over a broken connection: %v; want an error naming the release and the object", err)
	}
	f.setHook(nil)
	if _, err := b.GetRelease(ctx, "p", "w", 2); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("revision 2 after the failed create: %v", err)
	}
	if latest, err := b.LatestRelease(ctx, "p", "w"); err != nil || latest.Revision != 1 {
		t.Fatalf("LatestRelease after the failed create: %v, %v", latest, err)
	}
	if err := b.CreateRelease(ctx, backendtest.Release("p", "w", 2)); err != nil {
		t.Fatalf("CreateRelease once the store is back: %v", err)
	}
}
