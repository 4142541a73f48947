// Package memory is a runtime.Runtime that keeps objects in a map, for tests of
// the layers above the runtimes (activities, workflows) that need no real
// infrastructure. It keeps the same contract as the Kubernetes and Terraform
// runtimes (it passes engine/runtime/runtimetest): Read of an absent object wraps
// runtime.ErrNotFound, dry-runs change nothing, applying what is already there
// changes nothing, a cancelled context ends every call.
//
// Attributes are stored and returned normalized (engine.Normalize), as a real
// runtime returns them after a JSON round trip. Tests steer it with fault
// injection: Reject makes applies of an ID fail permanently, FailTransiently
// makes the next n calls on an ID fail with a retryable error, SetDelay makes
// every call take a while (and so be cancellable mid-way); Applied lists the
// applies made, Object shows an object without going through the runtime.
package memory
