package activities

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestTemporalError: each kind of release failure becomes an application error of
// its recorded type, retryable or not, with the message unchanged; other errors
// pass through for Temporal to retry.
func TestTemporalError(t *testing.T) {
	r := &engine.Release{Project: "p", Workspace: "w", Revision: 3, Phase: engine.PhaseApplying, RunID: "run-1", WorkflowID: "kumo/p/w"}
	locked := &release.LockedError{Release: r}
	for _, tc := range []struct {
		err       error
		typ       string
		retryable bool
	}{
		{&release.Error{Kind: release.ErrInvalid, Err: errors.New("bad spec")}, ErrTypeInvalid, false},
		{fmt.Errorf("x: %w", &release.Error{Kind: release.ErrResourceFailed, Err: errors.New("rejected")}), ErrTypeNode, false},
		{&release.Error{Kind: release.ErrGenerate, Err: errors.New("no app.yaml")}, ErrTypeGenerate, false},
		{&release.Error{Kind: release.ErrFinal, Err: errors.New("revision 1 is already succeeded")}, ErrTypeLocked, false},
		{&release.Error{Kind: release.ErrBackend, Err: errors.New("store spec: down")}, ErrTypeBackend, true},
		{locked, ErrTypeLocked, false},
	} {
		got := temporalError(tc.err)
		var app *temporal.ApplicationError
		if !errors.As(got, &app) {
			t.Fatalf("%v: %T, want an application error", tc.err, got)
		}
		if app.Type() != tc.typ || app.NonRetryable() == tc.retryable || app.Message() != tc.err.Error() {
			t.Errorf("%v: type %s, non-retryable %v, message %q; want %s, %v, the same message", tc.err, app.Type(), app.NonRetryable(), app.Message(), tc.typ, !tc.retryable)
		}
	}
	plain := errors.New("connection reset")
	if got := temporalError(plain); got != plain {
		t.Fatalf("plain error became %v", got)
	}
	if temporalError(nil) != nil {
		t.Fatal("nil became an error")
	}
}

type registry map[string]any

func (r registry) RegisterActivityWithOptions(a interface{}, o activity.RegisterOptions) {
	r[o.Name] = a
}

// TestRegisteredNames: every activity is registered under the name the SDK gives
// the method the workflows pass to ExecuteActivity, and every exported method is
// registered, so a rename cannot silently split the recorded histories from the
// worker.
func TestRegisteredNames(t *testing.T) {
	a := New(nil, nil, nil)
	reg := registry{}
	Register(reg, a)
	typ := reflect.TypeOf(a)
	if len(reg) != typ.NumMethod() {
		t.Fatalf("%d activities registered, %d methods", len(reg), typ.NumMethod())
	}
	for name, fn := range reg {
		// The SDK names a method value after the method: "pkg.(*T).Name-fm".
		full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
		method := strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
		if method != name {
			t.Errorf("activity %q is method %s", name, method)
		}
	}
}

// TestConversions: the wire types convert to their release twins field for field
// (a mismatch would not compile); this checks the values survive the trip.
func TestConversions(t *testing.T) {
	in := NodeInput{Key: backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2}, SpecHash: "h", PriorRevision: 1, ID: "id", Delete: true}
	if back := NodeInput(release.Node(in)); !reflect.DeepEqual(back, in) {
		t.Fatalf("NodeInput round trip: %+v", back)
	}
}
