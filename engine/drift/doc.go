// Package drift is the domain of a drift check, with no I/O: comparing what kumo
// recorded as desired with what is live, naming each drifted field (a JSON
// pointer), its recorded and live values and, for Kubernetes, the field manager
// that owns it now; Argo-style ignore rules; and the report of one check, with
// the first-seen / consecutive-checks bookkeeping carried over from the previous
// report.
//
// Kubernetes drift is computed from a server-side apply dry-run of the recorded
// object under kumo's field manager: only the fields kumo's managedFields entry
// holds after that dry-run are compared, so fields the apiserver defaulted and
// fields other managers own without conflicting with kumo's are never drift.
package drift
