// Package runspec is the vocabulary shared by every layer that starts, runs or
// reports a kumo run: the runtime settings a run carries, the stack a run
// generates its spec from, what generation produced, and the names of the
// search attributes runs are filed under. It holds plain data only, so the CLI,
// the client, the workflows and the activities can all agree on it without any
// of them importing the Temporal adapters.
//
// These types travel in workflow histories: their JSON shapes are recorded and
// must not change.
package runspec
