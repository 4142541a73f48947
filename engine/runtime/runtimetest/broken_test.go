package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	kumort "github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
)

// The suite is worth something only if it fails runtimes that break the
// contract: each broken runtime below breaks one rule, and the check about that
// rule must fail against it, while the same checks pass against the runtime it
// wraps.

type deleteMissingFails struct{ kumort.Runtime }

func (b deleteMissingFails) Delete(ctx context.Context, res *engine.Resource) error {
	if _, err := b.Read(ctx, res); errors.Is(err, kumort.ErrNotFound) {
		return fmt.Errorf("delete %s: not found", res.ID)
	}
	return b.Runtime.Delete(ctx, res)
}

type dryRunWrites struct{ kumort.Runtime }

func (b dryRunWrites) Apply(ctx context.Context, res *engine.Resource, _ kumort.ApplyOptions) (*engine.Resource, error) {
	return b.Runtime.Apply(ctx, res, kumort.ApplyOptions{})
}

type readMissingNil struct{ kumort.Runtime }

func (b readMissingNil) Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	out, err := b.Runtime.Read(ctx, res)
	if errors.Is(err, kumort.ErrNotFound) {
		return nil, nil
	}
	return out, err
}

// ignoresContext does its work whatever the caller's context says.
type ignoresContext struct{ kumort.Runtime }

func (b ignoresContext) Apply(_ context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	return b.Runtime.Apply(context.Background(), res, opts)
}

func (b ignoresContext) Read(_ context.Context, res *engine.Resource) (*engine.Resource, error) {
	return b.Runtime.Read(context.Background(), res)
}

func (b ignoresContext) Delete(_ context.Context, res *engine.Resource) error {
	return b.Runtime.Delete(context.Background(), res)
}

// checksOnEntry looks at its context when called, and no more after that.
type checksOnEntry struct{ kumort.Runtime }

func (b checksOnEntry) Apply(ctx context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.Runtime.Apply(context.Background(), res, opts)
}

// flattensErrors loses the permanent mark: every apply failure looks retryable.
type flattensErrors struct{ kumort.Runtime }

func (b flattensErrors) Apply(ctx context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	out, err := b.Runtime.Apply(ctx, res, opts)
	if err != nil {
		err = errors.New(err.Error())
	}
	return out, err
}

// everythingPermanent marks every apply failure permanent.
type everythingPermanent struct{ kumort.Runtime }

func (b everythingPermanent) Apply(ctx context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	out, err := b.Runtime.Apply(ctx, res, opts)
	return out, kumort.Permanent(err)
}

// recreates deletes and creates again on every apply: the result is right, the
// object is rewritten each time.
type recreates struct{ kumort.Runtime }

func (b recreates) Apply(ctx context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	if !opts.DryRun {
		if err := b.Runtime.Delete(ctx, res); err != nil {
			return nil, err
		}
	}
	return b.Runtime.Apply(ctx, res, opts)
}

// keepsFirst ignores updates: an apply of an existing object changes nothing.
type keepsFirst struct{ kumort.Runtime }

func (b keepsFirst) Apply(ctx context.Context, res *engine.Resource, opts kumort.ApplyOptions) (*engine.Resource, error) {
	if live, err := b.Runtime.Read(ctx, res); err == nil {
		return live, nil
	}
	return b.Runtime.Apply(ctx, res, opts)
}

// startsDeletes is a sound runtime.DeleteStarter: the delete is done when
// StartDelete returns.
type startsDeletes struct{ kumort.Runtime }

func (b startsDeletes) StartDelete(ctx context.Context, res *engine.Resource) (func(context.Context) error, error) {
	return nil, b.Delete(ctx, res)
}

// waitsForNothing's StartDelete deletes nothing, and its wait returns at once.
type waitsForNothing struct{ kumort.Runtime }

func (b waitsForNothing) StartDelete(ctx context.Context, _ *engine.Resource) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, ctx.Err()
}

func TestBrokenRuntimesFail(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(kumort.Runtime) kumort.Runtime
		fail []string // checks that must fail
	}{
		{"delete of missing fails", func(r kumort.Runtime) kumort.Runtime { return deleteMissingFails{r} }, []string{"DeleteMissing"}},
		{"dry-run writes", func(r kumort.Runtime) kumort.Runtime { return dryRunWrites{r} }, []string{"DryRunCreateChangesNothing", "DryRunUpdateChangesNothing"}},
		{"read of missing is nil", func(r kumort.Runtime) kumort.Runtime { return readMissingNil{r} }, []string{"ReadMissingIsNotFound", "Delete", "DryRunCreateChangesNothing"}},
		{"context ignored", func(r kumort.Runtime) kumort.Runtime { return ignoresContext{r} }, []string{"CancelledContext"}},
		{"cancel ignored once under way", func(r kumort.Runtime) kumort.Runtime { return checksOnEntry{r} }, []string{"CancelledMidway"}},
		{"invalid is retryable", func(r kumort.Runtime) kumort.Runtime { return flattensErrors{r} }, []string{"InvalidIsPermanent"}},
		{"transient is permanent", func(r kumort.Runtime) kumort.Runtime { return everythingPermanent{r} }, []string{"TransientIsRetryable", "CancelledContext"}},
		{"apply rewrites", func(r kumort.Runtime) kumort.Runtime { return recreates{r} }, []string{"ApplyTwiceIsNoOp"}},
		{"update ignored", func(r kumort.Runtime) kumort.Runtime { return keepsFirst{r} }, []string{"Update"}},
		{"delete started is not waited for", func(r kumort.Runtime) kumort.Runtime { return waitsForNothing{r} }, []string{"StartDelete"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memory.New()
			h := memoryHarness(c.wrap(store), store)
			slow := h.Slow
			h.Slow = func(t testing.TB, name string) Slow {
				s := slow(t, name)
				s.Runtime = c.wrap(s.Runtime)
				return s
			}
			defer func(p time.Duration) { patience = p }(patience)
			patience = time.Second // a broken runtime would keep the check waiting
			for _, name := range c.fail {
				rec := runCheck(t, name, h)
				if !rec.Failed() {
					t.Errorf("check %s passed a runtime whose %s", name, c.name)
				} else {
					t.Logf("%s failed as it should: %s", name, rec.messages())
				}
			}
		})
	}
}

// TestSoundRuntimePassesEveryCheck runs each check with the recorder against the
// sound memory runtime: a recorder that failed for other reasons would make
// TestBrokenRuntimesFail pass for nothing.
func TestSoundRuntimePassesEveryCheck(t *testing.T) {
	store := memory.New()
	h := memoryHarness(store, store)
	for _, c := range checks {
		if rec := runCheck(t, c.name, h); rec.Failed() {
			t.Errorf("%s failed against the memory runtime: %s", c.name, rec.messages())
		}
	}
}

// TestSoundDeleteStarterPasses: the StartDelete check, skipped for the memory
// runtime, passes a sound DeleteStarter.
func TestSoundDeleteStarterPasses(t *testing.T) {
	store := memory.New()
	rec := runCheck(t, "StartDelete", memoryHarness(startsDeletes{store}, store))
	if rec.Failed() || rec.skipped {
		t.Errorf("StartDelete failed (%v) or was skipped (%v) for a sound DeleteStarter: %s", rec.Failed(), rec.skipped, rec.messages())
	}
}

func runCheck(t *testing.T, name string, h Harness) *recorder {
	t.Helper()
	for _, c := range checks {
		if c.name == name {
			rec := &recorder{name: t.Name() + "/" + name, tempDir: t.TempDir}
			rec.run(func() { c.run(rec, h) })
			return rec
		}
	}
	t.Fatalf("no check %s", name)
	return nil
}

// recorder is a testing.TB that records failures instead of reporting them, so
// a check can be run expecting it to fail. Fatal and Skip end the check's
// goroutine, as they do in a real test.
type recorder struct {
	testing.TB // not set: a method the checks do not use panics
	name       string
	tempDir    func() string

	mu       sync.Mutex
	failed   bool
	skipped  bool
	logs     []string
	cleanups []func()
}

func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func (r *recorder) log(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, s)
}

func (r *recorder) messages() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.logs, "; ")
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return r.name }
func (r *recorder) TempDir() string           { return r.tempDir() }
func (r *recorder) Cleanup(f func())          { r.mu.Lock(); r.cleanups = append(r.cleanups, f); r.mu.Unlock() }
func (r *recorder) Log(args ...any)           { r.log(fmt.Sprint(args...)) }
func (r *recorder) Logf(f string, a ...any)   { r.log(fmt.Sprintf(f, a...)) }
func (r *recorder) Fail()                     { r.mu.Lock(); r.failed = true; r.mu.Unlock() }
func (r *recorder) Failed() bool              { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recorder) FailNow()                  { r.Fail(); runtime.Goexit() }
func (r *recorder) Error(args ...any)         { r.Log(args...); r.Fail() }
func (r *recorder) Errorf(f string, a ...any) { r.Logf(f, a...); r.Fail() }
func (r *recorder) Fatal(args ...any)         { r.Log(args...); r.FailNow() }
func (r *recorder) Fatalf(f string, a ...any) { r.Logf(f, a...); r.FailNow() }
func (r *recorder) SkipNow()                  { r.mu.Lock(); r.skipped = true; r.mu.Unlock(); runtime.Goexit() }
func (r *recorder) Skip(args ...any)          { r.Log(args...); r.SkipNow() }
func (r *recorder) Skipf(f string, a ...any)  { r.Logf(f, a...); r.SkipNow() }
func (r *recorder) Skipped() bool             { r.mu.Lock(); defer r.mu.Unlock(); return r.skipped }
