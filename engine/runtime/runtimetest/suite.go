package runtimetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// check is one conformance check; it reports through t only, so the suite's
// own tests can run it against broken runtimes with a recording testing.TB.
type check struct {
	name string
	run  func(t testing.TB, h Harness)
}

var checks = []check{
	{"CreateAndReadBack", createAndReadBack},
	{"Update", update},
	{"ApplyTwiceIsNoOp", applyTwice},
	{"DryRunCreateChangesNothing", dryRunCreate},
	{"DryRunUpdateChangesNothing", dryRunUpdate},
	{"Delete", deleteLive},
	{"DeleteMissing", deleteMissing},
	{"StartDelete", startDelete},
	{"ReadMissingIsNotFound", readMissing},
	{"CancelledContext", cancelled},
	{"CancelledMidway", cancelledMidway},
	{"InvalidIsPermanent", invalid},
	{"TransientIsRetryable", transient},
}

// Run runs every check against h's runtime, each as a subtest.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Runtime == nil || h.Fixture == nil || h.Observe == nil || h.Invalid == nil {
		t.Fatal("runtimetest: Harness needs Runtime, Fixture, Observe and Invalid")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// subject is one fixture's resource under test: what the caller last recorded
// for it, handed to every operation as kumo hands it to a runtime.
type subject struct {
	h        Harness
	fx       Fixture
	recorded *engine.Resource
}

// newSubject returns the fixture named name; the resource is deleted when the
// test ends, whatever the check left.
func newSubject(t testing.TB, h Harness, name string) *subject {
	t.Helper()
	s := &subject{h: h, fx: h.Fixture(t, name)}
	if s.fx.Create == nil || s.fx.Update == nil || s.fx.Create.ID != s.fx.Update.ID {
		t.Fatalf("fixture %s: Create and Update must be one resource (same ID)", name)
	}
	if reflect.DeepEqual(want(t, s.fx.Create, s.fx.Field), want(t, s.fx.Update, s.fx.Field)) {
		t.Fatalf("fixture %s: Create and Update set %s alike", name, s.fx.Field)
	}
	t.Cleanup(func() {
		if s.recorded != nil {
			_ = h.Runtime.Delete(context.Background(), s.recorded)
		}
	})
	return s
}

// desired is res as the caller would hand it now: with what was recorded.
func (s *subject) desired(res *engine.Resource) *engine.Resource {
	if s.recorded == nil || s.h.Record == nil {
		return res
	}
	return s.h.Record(res, s.recorded)
}

// apply applies res (carrying the record) and records the result.
func (s *subject) apply(t testing.TB, res *engine.Resource) *engine.Resource {
	t.Helper()
	out, err := s.h.Runtime.Apply(context.Background(), s.desired(res), runtime.ApplyOptions{})
	if out != nil {
		s.recorded = out
	}
	if err != nil {
		t.Fatalf("apply %s: %v", res.ID, err)
	}
	if out == nil {
		t.Fatalf("apply %s returned no resource and no error", res.ID)
	}
	return out
}

// target is what Read and Delete are handed: the record, else the fixture.
func (s *subject) target() *engine.Resource {
	if s.recorded != nil {
		return s.recorded
	}
	return s.fx.Create
}

func (s *subject) observe(t testing.TB) Observed {
	t.Helper()
	return s.h.Observe(t, s.fx.Create)
}

// wantLive fails t unless the object is live with res's value of the field.
func (s *subject) wantLive(t testing.TB, res *engine.Resource, when string) Observed {
	t.Helper()
	o := s.observe(t)
	if !o.Exists {
		t.Fatalf("%s: %s is not live", when, res.ID)
	}
	if w := want(t, res, s.fx.Field); !same(o.Value, w) {
		t.Errorf("%s: live %s = %v, want %v", when, s.fx.Field, o.Value, w)
	}
	return o
}

// wantAbsent fails t if the object is live.
func (s *subject) wantAbsent(t testing.TB, when string) {
	t.Helper()
	if o := s.observe(t); o.Exists {
		t.Errorf("%s: %s is live (%s = %v)", when, s.fx.Create.ID, s.fx.Field, o.Value)
	}
}

// wantField fails t unless got (a runtime's result) has res's value of the field.
func (s *subject) wantField(t testing.TB, got, res *engine.Resource, what string) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: no resource", what)
		return
	}
	if got.ID != res.ID {
		t.Errorf("%s: ID %q, want %q", what, got.ID, res.ID)
	}
	if v, w := lookup(got.Attributes, s.fx.Field), want(t, res, s.fx.Field); !same(v, w) {
		t.Errorf("%s: %s = %v, want %v", what, s.fx.Field, v, w)
	}
}

// wantApplied fails t unless the result of applying res (got), the live object
// and a Read all have res's value of the field.
func (s *subject) wantApplied(t testing.TB, res, got *engine.Resource, what string) Observed {
	t.Helper()
	s.wantField(t, got, res, what+" result")
	o := s.wantLive(t, res, "after the "+what)
	read, err := s.h.Runtime.Read(context.Background(), s.target())
	if err != nil {
		t.Fatalf("read after the %s: %v", what, err)
	}
	s.wantField(t, read, res, "read after the "+what)
	return o
}

func createAndReadBack(t testing.TB, h Harness) {
	s := newSubject(t, h, "create")
	s.wantAbsent(t, "before the apply")
	s.wantApplied(t, s.fx.Create, s.apply(t, s.fx.Create), "apply")
}

func update(t testing.TB, h Harness) {
	s := newSubject(t, h, "update")
	s.apply(t, s.fx.Create)
	s.wantApplied(t, s.fx.Update, s.apply(t, s.fx.Update), "update")
}

func applyTwice(t testing.TB, h Harness) {
	s := newSubject(t, h, "twice")
	first := s.wantApplied(t, s.fx.Create, s.apply(t, s.fx.Create), "first apply")
	if second := s.wantApplied(t, s.fx.Create, s.apply(t, s.fx.Create), "second apply"); second.Version != first.Version {
		t.Errorf("applying what is live wrote the object: version %s -> %s", first.Version, second.Version)
	}
}

func dryRunCreate(t testing.TB, h Harness) {
	s := newSubject(t, h, "dryrun-create")
	got, err := h.Runtime.Apply(context.Background(), s.fx.Create, runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatalf("dry-run of a new resource: %v", err)
	}
	s.wantField(t, got, s.fx.Create, "dry-run result")
	s.wantAbsent(t, "after a dry-run")
	if _, err := h.Runtime.Read(context.Background(), s.fx.Create); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("read after a dry-run of a new resource: %v, want ErrNotFound", err)
	}
}

func dryRunUpdate(t testing.TB, h Harness) {
	s := newSubject(t, h, "dryrun-update")
	s.apply(t, s.fx.Create)
	before := s.wantLive(t, s.fx.Create, "after the apply")
	got, err := h.Runtime.Apply(context.Background(), s.desired(s.fx.Update), runtime.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatalf("dry-run of an update: %v", err)
	}
	s.wantField(t, got, s.fx.Update, "dry-run result")
	if after := s.wantLive(t, s.fx.Create, "after a dry-run of an update"); after.Version != before.Version {
		t.Errorf("a dry-run wrote the object: version %s -> %s", before.Version, after.Version)
	}
}

func deleteLive(t testing.TB, h Harness) {
	s := newSubject(t, h, "delete")
	s.apply(t, s.fx.Create)
	if err := h.Runtime.Delete(context.Background(), s.target()); err != nil {
		t.Fatalf("delete: %v", err)
	}
	s.wantAbsent(t, "after the delete")
	if got, err := h.Runtime.Read(context.Background(), s.target()); !errors.Is(err, runtime.ErrNotFound) || got != nil {
		t.Errorf("read after the delete: %v, %v; want ErrNotFound", got, err)
	}
}

func deleteMissing(t testing.TB, h Harness) {
	s := newSubject(t, h, "delete-missing")
	if err := h.Runtime.Delete(context.Background(), s.fx.Create); err != nil {
		t.Errorf("delete of a resource never created: %v", err)
	}
	// Deleted once already, handed again with its (now stale) record: a retried
	// delete.
	s.apply(t, s.fx.Create)
	for i := range 2 {
		if err := h.Runtime.Delete(context.Background(), s.target()); err != nil {
			t.Errorf("delete %d of %s: %v", i+1, s.fx.Create.ID, err)
		}
	}
	s.wantAbsent(t, "after two deletes")
}

// startDelete checks runtime.DeleteStarter, for a runtime that has it: the
// delete issued, its wait (if any) returns once the resource is gone; a
// resource gone already needs no wait; a done context is refused.
func startDelete(t testing.TB, h Harness) {
	ds, ok := h.Runtime.(runtime.DeleteStarter)
	if !ok {
		t.Skip("the runtime does not implement runtime.DeleteStarter")
	}
	s := newSubject(t, h, "start-delete")
	s.apply(t, s.fx.Create)
	wait, err := ds.StartDelete(context.Background(), s.target())
	if err != nil {
		t.Fatalf("start delete: %v", err)
	}
	if wait != nil {
		if err := wait(context.Background()); err != nil {
			t.Fatalf("wait for the delete: %v", err)
		}
	}
	s.wantAbsent(t, "after the delete and its wait")
	for _, res := range []*engine.Resource{s.target(), s.fx.Create} {
		if wait, err := ds.StartDelete(context.Background(), res); err != nil || wait != nil {
			t.Errorf("start delete of %s, gone already: wait %v, error %v; want neither", res.ID, wait != nil, err)
		}
	}
	cancelledCtx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ds.StartDelete(cancelledCtx, s.target()); !errors.Is(err, context.Canceled) || runtime.IsPermanent(err) {
		t.Errorf("start delete with a cancelled context: %v, want a retryable error wrapping context.Canceled", err)
	}
}

func readMissing(t testing.TB, h Harness) {
	s := newSubject(t, h, "read-missing")
	got, err := h.Runtime.Read(context.Background(), s.fx.Create)
	if !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("read of a resource never created: %v, want an error wrapping runtime.ErrNotFound", err)
	}
	if got != nil {
		t.Errorf("read of a resource never created returned %+v", got)
	}
	if err != nil && !strings.Contains(err.Error(), s.fx.Create.ID) {
		t.Errorf("not-found error %q does not name %s", err, s.fx.Create.ID)
	}
}

func cancelled(t testing.TB, h Harness) {
	s := newSubject(t, h, "cancel")
	cancelledCtx, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), -1)
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelledCtx, context.Canceled}, {expired, context.DeadlineExceeded}} {
		wantCtxErr := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, c.want) {
				t.Errorf("%s with a done context: %v, want an error wrapping %v", op, err, c.want)
			} else if runtime.IsPermanent(err) {
				t.Errorf("%s with a done context: %v is marked permanent", op, err)
			}
		}
		_, err := h.Runtime.Apply(c.ctx, s.desired(s.fx.Create), runtime.ApplyOptions{})
		wantCtxErr("apply", err)
		_, err = h.Runtime.Apply(c.ctx, s.desired(s.fx.Create), runtime.ApplyOptions{DryRun: true})
		wantCtxErr("dry-run", err)
		_, err = h.Runtime.Read(c.ctx, s.target())
		wantCtxErr("read", err)
		wantCtxErr("delete", h.Runtime.Delete(c.ctx, s.target()))
	}
	s.wantAbsent(t, "after an apply with a done context")

	// On a live object: nothing changes either.
	s.apply(t, s.fx.Create)
	before := s.wantLive(t, s.fx.Create, "after the apply")
	_, err := h.Runtime.Apply(cancelledCtx, s.desired(s.fx.Update), runtime.ApplyOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("update with a cancelled context: %v", err)
	}
	if err := h.Runtime.Delete(cancelledCtx, s.target()); !errors.Is(err, context.Canceled) {
		t.Errorf("delete with a cancelled context: %v", err)
	}
	if after := s.wantLive(t, s.fx.Create, "after an update and a delete with a cancelled context"); after.Version != before.Version {
		t.Errorf("a cancelled call wrote the object: version %s -> %s", before.Version, after.Version)
	}
}

// patience bounds the waits of cancelledMidway, so that a runtime that ignores
// cancellation fails the check instead of hanging the test; it is not a
// performance bound. A variable for the suite's own tests.
var patience = 2 * time.Minute

func cancelledMidway(t testing.TB, h Harness) {
	if h.Slow == nil {
		t.Skip("the runtime has no slow apply to set up")
	}
	slow := h.Slow(t, "slow")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		out *engine.Resource
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := slow.Runtime.Apply(ctx, slow.Resource, runtime.ApplyOptions{})
		done <- result{out, err}
	}()
	cleanup := func(r result) {
		if r.out != nil {
			t.Cleanup(func() { _ = slow.Runtime.Delete(context.Background(), r.out) })
		}
	}
	deadline := time.Now().Add(patience)
	for !slow.Started() {
		select {
		case r := <-done:
			cleanup(r)
			t.Fatalf("the slow apply ended before it was seen under way: %v", r.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow apply of %s was not under way after %v", slow.Resource.ID, patience)
		}
	}
	cancel()
	select {
	case r := <-done:
		cleanup(r)
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("apply cancelled mid-way: %v, want an error wrapping context.Canceled", r.err)
		} else if runtime.IsPermanent(r.err) {
			t.Errorf("apply cancelled mid-way: %v is marked permanent", r.err)
		}
	case <-time.After(patience):
		t.Fatalf("apply of %s still running %v after its context was cancelled", slow.Resource.ID, patience)
	}
}

func invalid(t testing.TB, h Harness) {
	bad := h.Invalid(t, "invalid")
	if len(bad) == 0 {
		t.Fatal("Harness.Invalid returned no resource")
	}
	for _, res := range bad {
		out, err := h.Runtime.Apply(context.Background(), res, runtime.ApplyOptions{})
		if out != nil {
			t.Cleanup(func() { _ = h.Runtime.Delete(context.Background(), out) })
		}
		switch {
		case err == nil:
			t.Errorf("apply of invalid %s succeeded", res.ID)
		case !runtime.IsPermanent(err):
			t.Errorf("apply of invalid %s: %v is not marked permanent", res.ID, err)
		case !strings.Contains(err.Error(), res.ID):
			t.Errorf("apply of invalid %s: %q does not name the resource", res.ID, err)
		}
	}
}

func transient(t testing.TB, h Harness) {
	if h.Transient == nil {
		t.Skip("the runtime has no transient failure to set up")
	}
	tr := h.Transient(t, "transient")
	out, err := tr.Runtime.Apply(context.Background(), tr.Failing, runtime.ApplyOptions{})
	recorded := out
	t.Cleanup(func() {
		if recorded != nil {
			_ = tr.Runtime.Delete(context.Background(), recorded)
		}
	})
	if err == nil {
		t.Fatalf("apply of %s did not fail", tr.Failing.ID)
	}
	if runtime.IsPermanent(err) {
		t.Errorf("transient failure %v is marked permanent", err)
	}
	retry := tr.Retry
	if out != nil && h.Record != nil {
		retry = h.Record(retry, out)
	}
	got, err := tr.Runtime.Apply(context.Background(), retry, runtime.ApplyOptions{})
	if got != nil {
		recorded = got
	}
	if err != nil {
		t.Fatalf("retry after a transient failure: %v", err)
	}
}

// want is res's value of the dotted attribute path; the fixture must set it.
func want(t testing.TB, res *engine.Resource, path string) any {
	t.Helper()
	v := lookup(res.Attributes, path)
	if v == nil {
		t.Fatalf("fixture %s sets no %s", res.ID, path)
	}
	return v
}

// lookup returns the value at a dotted path in attrs, nil when absent.
func lookup(attrs map[string]any, path string) any {
	var v any = attrs
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// same compares attribute values as they travel, as JSON (42 and int64(42) alike).
func same(a, b any) bool {
	return reflect.DeepEqual(engine.Normalize(a), engine.Normalize(b))
}
