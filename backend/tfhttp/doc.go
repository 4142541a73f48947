// Package tfhttp is the kumo backend behind a state service that speaks
// Terraform's http backend protocol (GitLab's Terraform state API and the many
// in-house services written for `backend "http"`): documents fetched with GET,
// stored with POST (or PUT), removed with DELETE, and locked with LOCK/UNLOCK
// carrying a JSON lock info whose ID later requests on the document present as
// ?ID=. It passes the conformance suite (backend/backendtest) like the other
// drivers.
//
// # Mapping kumo's records onto state documents
//
// The protocol stores whole documents by name and can neither list nor write
// conditionally, so kumo builds both from documents and locks:
//
//   - Every key the store lays out (releases/<p>/<w>/<n>.yaml, specs/<hash>.yaml,
//     runs/<run>/<part>.log, ...) is one document at <base>/<escaped key>: the
//     key URL-escaped into a single path segment ('/' as %2F), so the names are
//     distinct for distinct keys and a service with flat state names (GitLab)
//     takes them. The document is JSON: {"kumo": 1, "version": <random ID>,
//     "data": <the bytes, base64>} — a fresh version for every write, and a
//     body a service that expects JSON accepts.
//   - Every directory has an index document, <base>/<escaped "!index:" + dir>,
//     listing the names and subdirectories directly under it ("!" starts no
//     key), so List is one GET.
//   - A write, delete or delete-all in a directory holds the lock of the
//     directory's index document for its duration (LOCK, then the reads and
//     writes, the index POSTed with ?ID=<lock ID>, then UNLOCK). Under it the
//     stored version is compared before a conditional write (create-only for
//     revision N+1, if-version for UpdateRelease), so of two writers exactly one
//     wins, as with S3's conditional PUTs and PostgreSQL's statements: what
//     the protocol cannot do atomically is done under its lock.
//   - A directory whose index becomes non-empty is added to its parent's index,
//     and one that becomes empty removed from it, while its own lock is held
//     (locks are only ever taken from deeper directories to shallower ones, so
//     two writers never wait on each other in a circle).
//
// A write stores the object before listing it, and a delete unlists it before
// removing it, so a crash in between leaves at worst an object its directory
// does not list (the next write of that key lists it again), never a listed
// object that is gone. Reads take no lock: a document is replaced whole.
//
// # Locks left behind
//
// A kumo that dies while holding a lock (it holds one for a few requests)
// leaves it on the service. A lock whose info says it was created more than
// StaleLock ago by kumo is broken (UNLOCK with its ID) by the next writer that
// finds it; kumo never breaks a lock another tool (Terraform) holds.
//
// # Credentials
//
// Basic auth from TF_HTTP_USERNAME (or the URL's user name) and
// TF_HTTP_PASSWORD (or the file TF_HTTP_PASSWORD_FILE names), as Terraform's
// http backend reads them; or a bearer token from KUMO_HTTP_TOKEN or
// KUMO_HTTP_TOKEN_FILE. A URL holding a password is refused, and credentials are
// never sent over plain http except to a loopback address.
package tfhttp
