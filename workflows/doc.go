// Package workflows holds kumo's deterministic orchestration: Preview, Apply and
// Destroy. A run creates its release, plans the DAG, previews every node, waits for
// approval, then walks the DAG with bounded parallelism, one activity per node, and
// finishes the release as succeeded or failed. Everything that touches the world is
// an activity (package activities); workflow code only decides what runs next.
package workflows
