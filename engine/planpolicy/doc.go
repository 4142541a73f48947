// Package planpolicy holds the rules a plan must pass before it is approved:
// each selects resources (kind, namespace, labels, action) and states, in CEL
// (cel.dev/cel-go), what must hold of them; a rule that does not hold denies
// the run, warns, or requires more approvers. Rules come from a workspace's
// stored settings (written by its administrators) and from the operator's
// server-wide file, never from a run's input or a spec.
//
// The package parses and compiles rules (once, with a cost limit), selects
// and evaluates them over a plan's resources, and describes the results; it
// knows nothing of Temporal, runtimes or backends, nor of kumo's engine
// types (engine builds a Resource from a change).
package planpolicy
