// Package rollout decides a progressive rollout of one stack across many
// workspaces, without Temporal: it parses the waves (a --waves string or a
// rollout.yaml), resolves their names and globs against the workspaces that
// exist, and makes the decisions the Rollout workflow only carries out — how
// many failures stop a wave, and what to undo, newest first.
//
// Waves are ordered; each takes workspaces by name or glob (path.Match
// syntax: *, ?, [a-z]). Every workspace is in at most one wave:
//
//   - a wave named "rest" takes whatever its patterns match that no earlier
//     wave took (so "rest=prod-*" after "eu=prod-eu*" is not an overlap);
//   - a wave named "N%" (1–100) takes N percent of its patterns' matches,
//     rounded up, the first in name order; the matches it leaves must be
//     taken by a later wave (usually "rest"), or the rollout is refused;
//   - any other wave takes all its patterns match; a workspace an earlier
//     wave took is an error naming both waves.
//
// A pattern without glob characters names one workspace, which must exist;
// a wave that takes no workspace is an error.
package rollout
