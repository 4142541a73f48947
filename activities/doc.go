// Package activities holds every side effect of a kumo run: reading specs and state
// from the backend, creating and finishing releases, and calling a Runtime for one
// resource at a time. Workflows orchestrate these; nothing here decides order.
//
// Each activity is safe to run twice (Temporal retries it after a crash): releases
// are keyed by the run that created them, applies are server-side applies, deletes
// of absent resources succeed, and state entries are replaced, not appended.
//
// Inputs and results are small (IDs, hashes, revisions): specs and resource bodies
// stay in the backend, so a run's history does not grow with resource size.
package activities
