// Package activities adapts the release package to Temporal: each activity
// decodes its input, calls one release.Manager step, and translates the domain's
// typed errors into Temporal application errors (retryable or not) in one place,
// errors.go. Workflows orchestrate these; nothing here decides order or holds
// domain logic. What the adapters share besides: heartbeats, and reading a
// retried attempt's last one to go on where it stopped (heartbeat.go); running
// a batch step of the release (runBatch in batch.go); sending what release
// says to a webhook (webhook.go).
//
// Activity type names, and the JSON shapes of inputs and results in types.go,
// are recorded in every run's history: they are fixed (names.go) and must not
// change, or running and recorded workflows no longer replay.
package activities
