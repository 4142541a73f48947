package backendtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// RunDriver runs the conformance suite on a backend.Store over each driver
// newDriver returns (empty each call), then checks what the Store does around its
// driver, the same for every driver: a canceled context and a bad name are
// refused before the driver is called, bad names with one message, and a failing
// driver's error comes back wrapped, naming the record it concerns.
func RunDriver(t *testing.T, newDriver func(t *testing.T) backend.Driver) {
	t.Run("Conformance", func(t *testing.T) {
		Run(t, func(t *testing.T) backend.Backend { return backend.NewStore(newDriver(t)) })
	})
	tests := []struct {
		name string
		fn   func(t *testing.T, d *recorder, b backend.Backend)
	}{
		{"CanceledContextTouchesNothing", testCanceledTouchesNothing},
		{"BadNamesTouchNothing", testBadNamesTouchNothing},
		{"DriverErrorsNameTheRecord", testDriverErrorsNameTheRecord},
		{"OldFormatsRead", testOldFormatsRead},
		{"NoOpRevisionIsSmall", testNoOpRevisionIsSmall},
		{"AlteredChunkRefused", testAlteredChunkRefused},
		{"Format2Reads", testFormat2Reads},
		{"IdentitySharedAcrossUpdates", testIdentitySharedAcrossUpdates},
		{"SummariesReadReleaseFilesOnly", testSummariesReadReleaseFilesOnly},
		{"Collect", testCollect},
		{"ReleaseHistory", testReleaseHistory},
		{"ReleaseHistoryRaces", testReleaseHistoryRaces},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &recorder{Driver: newDriver(t)}
			tc.fn(t, d, backend.NewStore(d))
		})
	}
}

// recorder counts the calls that reach a driver, and fails them all with fail
// when it is set.
type recorder struct {
	backend.Driver
	calls atomic.Int64
	fail  atomic.Pointer[error]
	// reads logs the keys read, while logging is set.
	mu      sync.Mutex
	logging bool
	reads   []string
}

// logReads starts logging the keys read, and returns a function that stops
// and returns them.
func (r *recorder) logReads() func() []string {
	r.mu.Lock()
	r.logging, r.reads = true, nil
	r.mu.Unlock()
	return func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.logging = false
		return r.reads
	}
}

func (r *recorder) call() error {
	r.calls.Add(1)
	if err := r.fail.Load(); err != nil {
		return *err
	}
	return nil
}

func (r *recorder) Read(ctx context.Context, key string) ([]byte, string, error) {
	if err := r.call(); err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	if r.logging {
		r.reads = append(r.reads, key)
	}
	r.mu.Unlock()
	return r.Driver.Read(ctx, key)
}

func (r *recorder) Exists(ctx context.Context, key string) (bool, error) {
	if err := r.call(); err != nil {
		return false, err
	}
	return r.Driver.Exists(ctx, key)
}

func (r *recorder) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	if err := r.call(); err != nil {
		return "", err
	}
	return r.Driver.Write(ctx, key, data, cond)
}

func (r *recorder) List(ctx context.Context, dir string) ([]backend.Entry, error) {
	if err := r.call(); err != nil {
		return nil, err
	}
	return r.Driver.List(ctx, dir)
}

func (r *recorder) Delete(ctx context.Context, key string) error {
	if err := r.call(); err != nil {
		return err
	}
	return r.Driver.Delete(ctx, key)
}

func (r *recorder) DeleteAll(ctx context.Context, dir string) error {
	if err := r.call(); err != nil {
		return err
	}
	return r.Driver.DeleteAll(ctx, dir)
}

// setup creates release p/w#1 and returns a copy of it to update.
func setup(t *testing.T, b backend.Backend) (backend.ReleaseKey, *engine.Release) {
	t.Helper()
	mustCreate(t, b, Release("p", "w", 1))
	r, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Phase = engine.PhaseFailed
	return backend.KeyOf(r), r
}

// testCanceledTouchesNothing: with a canceled context no method calls the driver.
func testCanceledTouchesNothing(t *testing.T, d *recorder, b backend.Backend) {
	key, r := setup(t, b)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for name, call := range everyCall(cctx, b, key, r) {
		before := d.calls.Load()
		err := call()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
		if n := d.calls.Load() - before; n != 0 {
			t.Errorf("%s with a canceled context called the driver %d times", name, n)
		}
	}
}

// testBadNamesTouchNothing: every method refuses each bad name before calling the
// driver, with the message the Store gives for every driver: what was called,
// then ValidateName's.
func testBadNamesTouchNothing(t *testing.T, d *recorder, b backend.Backend) {
	for _, bad := range BadNames {
		for _, kind := range []string{"project", "workspace"} {
			p, w := bad, "w"
			if kind == "workspace" {
				p, w = "p", bad
			}
			key := backend.ReleaseKey{Project: p, Workspace: w, Revision: 1}
			calls := map[string]func() error{
				"create release":      func() error { return b.CreateRelease(ctx, Release(p, w, 1)) },
				"update release":      func() error { return b.UpdateRelease(ctx, Release(p, w, 1)) },
				"get release":         func() error { _, err := b.GetRelease(ctx, p, w, 1); return err },
				"latest release":      func() error { _, err := b.LatestRelease(ctx, p, w); return err },
				"latest release head": func() error { _, err := b.LatestReleaseHead(ctx, p, w); return err },
				"list releases":       func() error { _, err := b.ListReleases(ctx, p, w); return err },
				"put state entry":     func() error { return b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:x"}) },
				"get state entry":     func() error { _, _, err := b.GetStateEntry(ctx, key, "v1:Namespace:x"); return err },
				"list state entries":  func() error { _, err := b.ListStateEntries(ctx, key); return err },
				"clear state entries": func() error { return b.ClearStateEntries(ctx, key) },
			}
			if kind == "workspace" {
				calls["list projects"] = func() error { _, err := b.ListProjects(ctx, bad); return err }
				calls["create workspace"] = func() error { return b.CreateWorkspace(ctx, Workspace(bad)) }
				calls["put workspace"] = func() error { return b.PutWorkspace(ctx, Workspace(bad)) }
				calls["get workspace"] = func() error { _, err := b.GetWorkspace(ctx, bad); return err }
				calls["delete workspace"] = func() error { return b.DeleteWorkspace(ctx, bad) }
			}
			want := backend.ValidateName(kind, bad).Error()
			for op, call := range calls {
				checkRefused(t, d, op+": "+want, call)
			}
		}
		checkRefused(t, d, "put run log: "+backend.ValidateName("run", bad).Error(), func() error {
			return b.PutRunLog(ctx, bad, "part", []byte("x"))
		})
		checkRefused(t, d, "put run log of run: "+backend.ValidateName("log part", bad).Error(), func() error {
			return b.PutRunLog(ctx, "run", bad, []byte("x"))
		})
		checkRefused(t, d, "run log: "+backend.ValidateName("run", bad).Error(), func() error {
			_, err := b.RunLog(ctx, bad)
			return err
		})
	}
}

func checkRefused(t *testing.T, d *recorder, want string, call func() error) {
	t.Helper()
	before := d.calls.Load()
	err := call()
	if err == nil || err.Error() != want || !errors.Is(err, backend.ErrInvalidName) {
		t.Fatalf("got error %v\nwant %s", err, want)
	}
	if n := d.calls.Load() - before; n != 0 {
		t.Fatalf("%s: the driver was called %d times", want, n)
	}
}

// testDriverErrorsNameTheRecord: when every driver call fails, every method
// returns an error that wraps the driver's and names the record it concerns.
func testDriverErrorsNameTheRecord(t *testing.T, d *recorder, b backend.Backend) {
	key, r := setup(t, b)
	hash := engine.HashSpec(&engine.Spec{})
	broken := errors.New("the disk is on fire")
	d.fail.Store(&broken)
	names := map[string][]string{
		"PutSpec":           {hash},
		"GetSpec":           {hash},
		"CreateRelease":     {"p/w#2"},
		"UpdateRelease":     {"p/w#1"},
		"GetRelease":        {"p/w#1"},
		"LatestRelease":     {"p/w"},
		"LatestReleaseHead": {"p/w"},
		"ListReleases":      {"p/w"},
		"PutStateEntry":     {"p/w#1", "v1:Namespace:x"},
		"GetStateEntry":     {"p/w#1", "v1:Namespace:x"},
		"ListStateEntries":  {"p/w#1"},
		"ClearStateEntries": {"p/w#1"},
		"ListProjects":      {"workspace w"},
		"CreateWorkspace":   {"workspace dev"},
		"PutWorkspace":      {"workspace prod"},
		"GetWorkspace":      {"workspace dev"},
		"ListWorkspaces":    {"workspaces"},
		"DeleteWorkspace":   {"workspace dev"},
		"PutRunLog":         {"run-7", "000003"},
		"RunLog":            {"run-7"},
		"AppendAudit":       {"append audit entry a", "by s"},
		"ListAudit":         {"list audit"},
	}
	calls := everyCall(ctx, b, key, r)
	if len(calls) != len(names) {
		t.Fatalf("%d calls, %d expectations", len(calls), len(names))
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, broken) {
			t.Errorf("%s on a failing driver: %v, want the driver's error wrapped", name, err)
			continue
		}
		for _, n := range names[name] {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s on a failing driver: %q does not name %s", name, err, n)
			}
		}
	}
	d.fail.Store(nil)
	if got, err := b.GetRelease(ctx, "p", "w", 1); err != nil || got.Phase != engine.PhaseApplying {
		t.Fatal(fmt.Errorf("release after the failed calls: %v, %w", got, err))
	}
}
