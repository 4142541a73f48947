// Package s3 is the kumo backend on S3 or an S3-compatible object store (MinIO,
// Ceph, versitygw, ...), so that a team's machines and workers share releases,
// state, workspaces and run logs. It behaves like backend/local and passes the same
// conformance suite (backend/backendtest).
//
// # Layout
//
// Its Driver stores bytes at keys; backend.Store on top of it checks names,
// encodes records and numbers revisions. Under s3://<bucket>/<prefix>/ the objects
// are at the keys backend.Store lays out, the same paths as the local backend's
// root (releases/<project>/<workspace>/<revision>.yaml, .../.latest,
// specs/<hash>.yaml, workspaces/<name>.yaml, runs/<run ID>/<part>.log, ...).
//
// # Atomicity
//
// A PUT replaces an object whole or not at all, so a release, entry or workspace is
// never seen half-written, whatever fails. Revision N+1 is created with a
// conditional write (If-None-Match: *): of any number of writers on any number of
// machines exactly one creates it and the others get backend.ErrRevisionExists.
// Revision N+1 is only written once revision N exists, so revisions have no gaps.
// A release's Version is its ETag, and UpdateRelease writes with If-Match on it:
// a writer holding a stale copy gets backend.ErrConflict and changes nothing.
// Each conditional write carries a random write ID in its metadata
// (x-amz-meta-kumo-write). When one is refused, the stored object's ID is looked
// at: if it is this write's, the refused request was the SDK's retry of an attempt
// that had succeeded but whose response was lost, and the write counts as done;
// so a retry never turns a success into a conflict, nor a conflict into a success.
//
// # Consistency
//
// Finding the latest revision does not list anything: backend.Store reads the
// .latest hint and probes upward with existence checks (HEAD requests here).
// Listing is used only where nothing else can answer (state entries, workspaces,
// projects, run log parts).
//
// # Failures and size
//
// Requests are retried with exponential backoff and jitter on throttling, 5xx and
// connection errors (Options.MaxAttempts, Options.MaxBackoff); a client-side retry
// quota is not used, so a long outage does not turn later requests into instant
// failures. An object is uploaded from its encoded bytes (a seekable reader, no
// copy) and read from the response body into one buffer of its Content-Length.
package s3
