// Package postgres is the kumo backend in a PostgreSQL database, for platform
// teams that already run PostgreSQL (for Temporal, say): releases, specs,
// in-flight state, workspaces, run logs, drift reports and the audit log live in
// one table, shared by every machine and worker that opens the same database.
// It passes the conformance suite (backend/backendtest) like backend/local and
// backend/s3.
//
// # Layout
//
// Its Driver stores bytes at keys, as every driver does; backend.Store on top
// checks names, encodes records and numbers revisions. Each key is one row of
// kumo_objects (key, dir, name, data bytea, version): dir and name split the
// key at its last '/', so a listing is an index scan. Large values are kept
// by PostgreSQL's TOAST (compressed and moved out of line past about 2 kB);
// the store above decides what the bytes are.
//
// # Atomicity
//
// Every write is one statement. Revision N+1 is created with INSERT ... ON
// CONFLICT DO NOTHING on the primary key: of any number of writers exactly one
// creates it, the others get backend.ErrRevisionExists from the store. A row's
// version is a number from the sequence kumo_version, given anew by every
// write; UpdateRelease's conditional write is UPDATE ... WHERE version = $v, so
// a writer holding a stale copy gets backend.ErrConflict and changes nothing.
//
// # Listing in one query
//
// The driver also reads a directory's objects with their bytes in one query
// (backend.DirReader), which the store uses for ListReleases: `kumo release
// list` over 10,000 revisions is one round trip, not 10,000.
//
// # Schema
//
// kumo creates and migrates its schema itself, in the database (and schema, by
// search_path) the URL names: numbered migrations, applied in order inside one
// transaction under an advisory lock, recorded in kumo_schema. A kumo that finds
// a schema newer than the migrations it knows refuses to open it, saying which
// version it found and which it knows, instead of writing rows an older layout
// does not expect.
//
// # Credentials
//
// The URL names host, port, database, user and options (sslmode, ...); the
// password comes from PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass),
// never from the URL: a URL with a password is refused, since it would be seen
// in process lists, shell history and project.yaml. Messages name the
// database by its URL without credentials.
package postgres
