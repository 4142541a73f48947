package embedded

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// ensureSchema creates the database file with Temporal's SQLite schema if it
// does not exist yet. The schema is written to a side file which is renamed
// into place only when complete, so an interrupted first start never leaves a
// half-initialised database behind.
func ensureSchema(dbPath string) error {
	if _, err := os.Stat(dbPath); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("embedded temporal: %w", err)
	}
	tmp := dbPath + ".init"
	for _, p := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("embedded temporal: remove stale %s: %w", p, err)
		}
	}
	if err := writeSchema(tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("embedded temporal: create schema in %s: %w", dbPath, err)
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return fmt.Errorf("embedded temporal: %w", err)
	}
	return nil
}

// writeSchema runs the server's schema setup on its own connection, opened
// with the "sqlite" driver the server's SQLite plugin registers. The plugin's
// connection pool is not used: it never closes connections, and this one
// must be closed before the file is renamed.
func writeSchema(path string) (err error) {
	q := url.Values{}
	q.Set("mode", "rwc")
	q.Add("_pragma", "synchronous=FULL")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	db.SetMaxOpenConns(1)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("schema setup panicked: %v", r)
		}
	}()
	return sqliteschema.SetupSchemaOnDB(schemaDB{db: db})
}

// schemaDB gives SetupSchemaOnDB the one method it uses, Exec. Any other
// AdminDB method would hit the nil embedded interface and panic, which
// writeSchema turns into an error.
type schemaDB struct {
	sqlplugin.AdminDB
	db *sql.DB
}

func (s schemaDB) Exec(stmt string, args ...any) error {
	_, err := s.db.Exec(stmt, args...)
	return err
}
