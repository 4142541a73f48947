// Package runtimetest is the conformance suite every runtime.Runtime passes: the
// Kubernetes runtime against a real apiserver, the Terraform runtime with real
// providers, and the in-memory runtime the workflow tests use. It checks the
// contract written on runtime.Runtime, so code above the runtimes can rely on it
// whichever runtime it drives:
//
//   - create, read back, update;
//   - applying what is already live changes nothing;
//   - a dry-run changes nothing live, for a new object and for an update;
//   - delete, and delete of a missing resource succeeds;
//   - Read of a missing resource is an error wrapping runtime.ErrNotFound;
//   - a cancelled or expired context ends every method with an error wrapping
//     the context's error, not permanent, and changes nothing; an apply
//     cancelled while under way ends too (for runtimes whose applies can be
//     made slow);
//   - invalid input fails permanently (runtime.IsPermanent), a transient failure
//     (when the runtime can have one) is retryable and a retry succeeds.
//
// A runtime's tests call Run with a Harness: the runtime, fixtures (a resource,
// an update of it, invalid resources, a way to make a failure transient) and a
// way to observe the live object without the runtime under test, so that "the
// dry-run changed nothing" is checked against the infrastructure, not against
// what the runtime says about itself.
//
//	func TestConformance(t *testing.T) {
//		runtimetest.Run(t, runtimetest.Harness{Runtime: rt, Fixture: ..., Observe: ..., Invalid: ...})
//	}
//
// The suite's own tests run it against deliberately broken runtimes and check
// that each breach fails the check that is about it.
package runtimetest
