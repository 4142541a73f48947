package runtimetest

import (
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Harness is what the suite needs to know about one runtime.
type Harness struct {
	// Runtime is the runtime under test.
	Runtime runtime.Runtime

	// Fixture returns a resource that does not exist yet and an update of it.
	// Every call names a different resource (name differs per check).
	Fixture func(t testing.TB, name string) Fixture

	// Observe looks at the live object res names without the runtime under
	// test (the apiserver through another client, the file a Terraform resource
	// manages, the memory runtime's store).
	Observe func(t testing.TB, res *engine.Resource) Observed

	// Invalid returns resources the infrastructure refuses for good (a schema
	// rejection, an unknown kind, an unknown Terraform argument); each is
	// applied once and must fail permanently.
	Invalid func(t testing.TB, name string) []*engine.Resource

	// Transient, when set, sets up a failure that retrying fixes (an apiserver
	// answering 503, a provider's API refusing connections). Nil for a runtime
	// that cannot have one; the check is then skipped.
	Transient func(t testing.TB, name string) Transient

	// Slow, when set, sets up an apply that takes minutes, for the suite to
	// cancel while it is under way. Nil for a runtime whose applies cannot be
	// made slow; the check is then skipped (a context done before the call is
	// checked for every runtime).
	Slow func(t testing.TB, name string) Slow

	// Record, when set, returns desired as the caller hands it to the runtime
	// after result was recorded (Terraform: carrying result's terraform state).
	// Nil: the runtime keeps no state in the record, desired is handed as it is.
	Record func(desired, result *engine.Resource) *engine.Resource
}

// Fixture is one resource in two desired states.
type Fixture struct {
	// Create and Update are two desired states of one resource (same ID).
	Create, Update *engine.Resource
	// Field is the dotted attribute path (e.g. "data.color") whose value Create
	// and Update set differently; the suite finds it in results and in what
	// Observe sees.
	Field string
}

// Observed is the live object as seen without the runtime under test.
type Observed struct {
	// Exists is false when there is no such object.
	Exists bool
	// Value is the live value of the fixture's Field.
	Value any
	// Version changes whenever the object is written, and only then
	// (Kubernetes: metadata.resourceVersion; a file: its modification time).
	Version string
}

// Transient is a failure that passes.
type Transient struct {
	// Runtime is the runtime that fails (it may be Harness.Runtime itself, or
	// one behind a proxy that fails).
	Runtime runtime.Runtime
	// Failing is a resource whose first apply through Runtime fails transiently.
	Failing *engine.Resource
	// Retry is the resource the retry applies (Failing again, when the failure
	// is in the runtime's surroundings; the same resource with the failure
	// removed, when it is in the resource). Its apply must succeed.
	Retry *engine.Resource
}

// Slow is an apply that takes minutes unless cancelled.
type Slow struct {
	// Runtime applies Resource slowly (it may be Harness.Runtime itself).
	Runtime  runtime.Runtime
	Resource *engine.Resource
	// Started reports whether the apply is under way (the provider is
	// waiting), so the suite cancels it mid-way, not before it began.
	Started func() bool
}
