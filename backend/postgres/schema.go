package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions: migrations[i] takes a database from
// version i to i+1. They are only ever appended to: a released migration never
// changes, so every database at version n has the same layout.
var migrations = []string{
	// 1: one row per key, versions from a sequence.
	`CREATE SEQUENCE kumo_version;
	 CREATE TABLE kumo_objects (
		key     text COLLATE "C" PRIMARY KEY,
		dir     text COLLATE "C" NOT NULL,
		name    text COLLATE "C" NOT NULL,
		data    bytea NOT NULL,
		version bigint NOT NULL DEFAULT nextval('kumo_version')
	 );`,
	// 2: listings scan an index of dir (and its prefixes, for subdirectories).
	`CREATE INDEX kumo_objects_dir ON kumo_objects (dir, name);`,
}

// SchemaVersion is the schema version this kumo creates and understands.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key that serializes kumo's migrations of one
// database ("kumo" in ASCII).
const migrationLock = 0x6b756d6f

// ErrSchemaTooNew is wrapped by the error Open returns for a database whose
// schema a newer kumo migrated.
var ErrSchemaTooNew = errors.New("schema is newer than this kumo")

// migrate brings the schema to version want (SchemaVersion, or less in tests),
// creating it in an empty database. Concurrent kumos wait for each other on an
// advisory lock, so each migration runs once.
func migrate(ctx context.Context, pool *pgxpool.Pool, where string, want int) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("%s: lock the schema for migration: %w", where, err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS kumo_schema (version integer NOT NULL)`); err != nil {
		return fmt.Errorf("%s: create kumo_schema: %w", where, err)
	}
	have := 0
	switch err := tx.QueryRow(ctx, `SELECT version FROM kumo_schema`).Scan(&have); {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `INSERT INTO kumo_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	case err != nil:
		return fmt.Errorf("%s: read the schema version: %w", where, err)
	}
	if have > len(migrations) {
		return fmt.Errorf("%s: %w: the database's kumo schema is version %d, this kumo knows versions up to %d: upgrade kumo (an older kumo does not write to a newer schema)",
			where, ErrSchemaTooNew, have, len(migrations))
	}
	if have >= want {
		return nil
	}
	for v := have; v < want; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("%s: migrate the kumo schema from version %d to %d: %w", where, v, v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE kumo_schema SET version = $1`, want); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: commit the schema migration: %w", where, err)
	}
	return nil
}
