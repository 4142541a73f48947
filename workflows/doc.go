// Package workflows holds kumo's deterministic orchestration: Preview, Apply and
// Destroy. A run creates its release, plans the DAG, previews every node (writing
// nothing), waits for approval, refreshes the record of unchanged resources that
// changed live, then walks the DAG with bounded parallelism, one activity per node,
// and finishes the release as succeeded or failed. Everything that touches the world is
// an activity (package activities); workflow code only decides what runs next.
package workflows
