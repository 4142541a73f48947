// Package release is the lifecycle of a kumo release, with no Temporal in it:
// generate and store a spec, begin a release (refusing while another live run
// holds the stack, creating the next revision atomically), plan the graph a run
// walks, preview (writing nothing), refresh the record of unchanged resources
// once a run is approved, apply, delete or undo one resource and record its outcome,
// finish (fold the recorded entries into the final state, once), close a release
// its run abandoned (`kumo release unlock`), and choose a rollback target.
//
// The steps on one resource have a file each, named for the verb: preview.go,
// apply.go, delete.go and compensate.go (CompensateBatch too), over node.go
// (the Node they take) and refs.go (resolving references to other
// resources); previewbatch.go and batch.go run many previews, applies and
// deletes in one step.
//
// Every step a workflow may retry is idempotent: called twice with the same
// input it gives the same result. Failures a retry cannot fix are typed errors
// (ErrLocked, ErrInvalid, ErrResourceFailed, ...) that callers test with
// errors.Is; the activities package translates them into Temporal errors.
package release
