// Package workflows holds kumo's deterministic orchestration: the Temporal
// workflows Preview, Apply, Destroy, Rollback, Remediate, Generate and
// DriftCheck. Everything that touches the world (the backend, a cluster,
// Terraform, a webhook) is an activity of package activities; workflow code
// only decides what runs next, and is replayed from the run's history to
// decide it again after a crash.
//
// # A run
//
// Apply, Destroy and Rollback share one flow (mutate.go). newRun (run.go)
// sets up the run's state, its queries and its approval handler; status.go
// keeps its KumoStatus and Web UI details current and turns a cancel into a
// stop between steps. A run from a stack generates its spec first
// (generate.go). Then CreateRelease records the release, and from there every
// way out finishes it (FinishRelease, on a context a cancel does not reach).
// Planning takes the DAG page by page (planGraph); preview diffs every node
// against what is live, in no order (reads need none), and writes nothing. The run then waits for approval (approval.go) unless it was
// auto-approved or nothing changes: an ApproveUpdate answers it, bound to the
// plan's digest, and an approved plan is previewed again so that a plan that
// changed meanwhile fails as stale instead of being applied unseen. Once
// approved, the records of unchanged resources that changed live are
// refreshed (refresh.go), and walkChanges applies and deletes the changed
// nodes in dependency order. Preview (preview.go) is the same up to the
// diff, with no release; Remediate (drift_remediate.go) is an Apply that a
// DriftCheck (drift.go) starts as a child.
//
// # The walk
//
// batchWalk (walkbatch.go) starts a node once all it depends on succeeded,
// with at most RunInput.Parallelism steps at once; after the first failure,
// or a cancel, nothing new starts and the steps in flight finish. A step is
// one node or a batch: ready Kubernetes nodes of one class (applies, deletes,
// previews or refreshes) share one activity of up to maxBatch nodes
// (batch.go), and fanOut gives each node its own future, so the walk goes on
// per node. A small plan's batches are local activities on the workflow's
// own worker, and its ready nodes of one class go as one pool, a step that
// holds every free slot and keeps that many of its nodes going. A node alone
// runs as a local activity on the workflow's own worker when it can
// (node.go). An applied node that is not healthy yet
// waits for health (wait.go). Once the history is long (history.go), a chain
// of the graph (each node the only dependent of the one before) runs as
// steps of up to maxBatch nodes (chain.go), and the waits after a batch
// share one activity. Even so, a run stops short of Temporal's history
// limit, failing its release with how far it got, rather than being ended
// without a finished release. walk.go is the walk of runs recorded before
// batches.
//
// # Compensation
//
// An apply that fails with RollbackOnFailure undoes what it changed, saga
// style (compensate.go): the nodes it applied, in the order they finished,
// are undone dependents first, in batches of one undo class. An undo that
// fails is reported in the release's Compensation and the others go on; the
// original failure stays the release's error.
//
// # Crashes
//
// A local activity's result is history only once its workflow task
// completes: a worker that dies first loses the task, and the next worker
// runs its local steps again from the last completed task. Writes are made
// so that this is harmless (every step is keyed by the run and idempotent),
// but a read run again after this run's own writes sees them. So a walk
// never writes in the task whose local previews it follows unless they are
// kept: when that task also created the release, the phase step keeps them
// in the backend first, and the task's next attempt, told so by the release
// it creates again, reads them back instead of previewing; otherwise the
// phase is an ordinary activity, and the task completes first
// (releasesteps.go, phaseSteps). Undo steps are ordinary activities, so a
// lost task after them holds only the finish, which a final release ignores.
//
// # Determinism
//
// A run's history is the commands its code issued (activities scheduled,
// timers, markers, search attributes) in order, and replay must issue the
// same ones. So workflow code uses workflow.Now, workflow.Go, workflow
// channels and selectors, never the clock, goroutines or a random number;
// it goes through nodes in plan order, never in a map's order; and it reads
// the world only through activities' results. Options (timeouts, retries,
// the workspace's runtime task queue) are chosen in options.go. A change
// that would issue other commands for a run already in flight keeps the old
// commands behind a workflow.GetVersion branch: versions.go lists every
// change, the histories in testdata that replay each branch, and how an old
// branch is retired. replay_test.go replays every recorded history; record
// new ones with -record and -record-tag when a workflow changes on purpose,
// and keep the old ones.
package workflows
