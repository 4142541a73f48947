// Package s3 is the kumo backend on S3 or an S3-compatible object store (MinIO,
// Ceph, versitygw, ...), so that a team's machines and workers share releases,
// state, workspaces and run logs. It behaves like backend/local and passes the same
// conformance suite (backend/backendtest).
//
// # Layout
//
// Under s3://<bucket>/<prefix>/, the same paths as the local backend's root:
//
//	releases/<project>/<workspace>/<revision>.yaml            one engine.Release per object
//	releases/<project>/<workspace>/<revision>.state/<h>.json  one backend.StateEntry per resource
//	                                                          of a running release (<h> = sha256
//	                                                          of the resource ID)
//	releases/<project>/<workspace>/.latest                    a hint: the highest revision
//	                                                          its writer had created
//	specs/<hash>.yaml                                         specs by content hash
//	workspaces/<name>.yaml                                    one engine.Workspace per object
//	runs/<run ID>/<part>.log                                  the parts of a run's log
//
// Names are checked with backend.ValidateName before they become keys (letters,
// digits, '.', '_', '-'; never "." or ".."), resource IDs are hashed, and spec
// hashes must be hex, so no caller-supplied value adds a '/' to a key or reaches
// outside the prefix.
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
// Finding the latest revision does not list anything: revisions are gapless, so
// the backend reads the .latest hint (which may lag behind, never run ahead) and
// probes upward with HEAD requests, galloping then bisecting, until it finds the
// first revision that does not exist. A missing or stale hint costs a few more
// requests, not a wrong answer. Listing is used only where nothing else can
// answer (state entries, workspaces, projects, run log parts).
//
// # Failures and size
//
// Requests are retried with exponential backoff and jitter on throttling, 5xx and
// connection errors (Options.MaxAttempts, Options.MaxBackoff); a client-side retry
// quota is not used, so a long outage does not turn later requests into instant
// failures. Memory does not grow with the number of revisions: latest is probed,
// not listed, and reading revision N reads one object. An object is uploaded from
// its encoded bytes (a seekable reader, no copy) and read from the response body
// into one buffer of its Content-Length; state entries are listed page by page and
// fetched a bounded number at a time.
package s3
