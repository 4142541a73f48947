// Package runspec is the run contract: the vocabulary shared by every layer
// that starts, runs or reports a kumo run. It holds what a run is started
// with (RunInput, GenerateInput, DriftInput and the RuntimeSettings they
// carry), what it answers while it goes (Progress, ProgressPage, an
// approval's state) and when it ends (Result, DriftResult), the names by
// which Temporal knows it (task queue, workflow types, signals, queries,
// updates, memo keys, workflow and schedule IDs) and the one table of search
// attributes runs are filed under.
//
// It holds plain data only and imports no Temporal package, so the CLI, the
// client, the worker, the workflows and the activities agree on it without
// the CLI and the client depending on the workflow SDK.
//
// These types travel in workflow histories: their JSON shapes and the names
// are recorded and must not change.
package runspec
