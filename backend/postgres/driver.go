package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kumoproj/kumo/backend"
)

// split cuts key at its last '/' into the row's dir and name.
func split(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

// below returns the range [lo, hi) of dir values under dir's subdirectories:
// '0' is the byte after '/', and the columns compare bytewise (COLLATE "C").
func below(dir string) (lo, hi string) {
	if dir == "" {
		return "", "\U0010FFFF"
	}
	return dir + "/", dir + "0"
}

// Where names key in the database, for messages.
func (d *Driver) Where(key string) string { return d.where + " key " + key }

// fail wraps a database error naming key; a canceled context comes back as
// the context's error.
func (d *Driver) fail(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%s: %w", d.Where(key), err)
}

// Read is one SELECT by primary key.
func (d *Driver) Read(ctx context.Context, key string) ([]byte, string, error) {
	var data []byte
	var version int64
	err := d.pool.QueryRow(ctx, `SELECT data, version FROM kumo_objects WHERE key = $1`, key).Scan(&data, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
	}
	if err != nil {
		return nil, "", d.fail(ctx, key, err)
	}
	return data, strconv.FormatInt(version, 10), nil
}

// Exists asks without reading the bytes.
func (d *Driver) Exists(ctx context.Context, key string) (bool, error) {
	var ok bool
	if err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM kumo_objects WHERE key = $1)`, key).Scan(&ok); err != nil {
		return false, d.fail(ctx, key, err)
	}
	return ok, nil
}

// Write is one statement: INSERT ... ON CONFLICT DO NOTHING for CreateOnly,
// UPDATE ... WHERE version = $v for IfVersion, an upsert otherwise. Each gives
// the row a new version from the sequence.
func (d *Driver) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	if data == nil {
		data = []byte{}
	}
	dir, name := split(key)
	var version int64
	var err error
	switch {
	case cond.CreateOnly:
		err = d.pool.QueryRow(ctx, `INSERT INTO kumo_objects (key, dir, name, data) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key) DO NOTHING RETURNING version`, key, dir, name, data).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", fmt.Errorf("%s: %w", d.Where(key), backend.ErrExists)
		}
	case cond.IfVersion != "":
		want, perr := strconv.ParseInt(cond.IfVersion, 10, 64)
		if perr != nil {
			want = -1 // not a version this driver gave: matches no row
		}
		err = d.pool.QueryRow(ctx, `UPDATE kumo_objects SET data = $2, version = nextval('kumo_version')
			WHERE key = $1 AND version = $3 RETURNING version`, key, data, want).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", d.refused(ctx, key, cond.IfVersion)
		}
	default:
		err = d.pool.QueryRow(ctx, `INSERT INTO kumo_objects (key, dir, name, data) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key) DO UPDATE SET data = excluded.data, version = excluded.version
			RETURNING version`, key, dir, name, data).Scan(&version)
	}
	if err != nil {
		return "", d.fail(ctx, key, err)
	}
	return strconv.FormatInt(version, 10), nil
}

// refused explains a conditional update that matched no row.
func (d *Driver) refused(ctx context.Context, key, want string) error {
	var have int64
	err := d.pool.QueryRow(ctx, `SELECT version FROM kumo_objects WHERE key = $1`, key).Scan(&have)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
	case err != nil:
		return d.fail(ctx, key, err)
	}
	return fmt.Errorf("%w: %s is version %d, not %s", backend.ErrConflict, d.Where(key), have, want)
}

// List is one query: the objects whose dir is dir, and the first segment of
// the dirs below it.
func (d *Driver) List(ctx context.Context, dir string) ([]backend.Entry, error) {
	lo, hi := below(dir)
	rows, err := d.pool.Query(ctx, `SELECT name, false FROM kumo_objects WHERE dir = $1
		UNION
		SELECT DISTINCT split_part(substr(dir, $4::int), '/', 1), true FROM kumo_objects WHERE dir >= $2 AND dir < $3 AND dir <> ''`,
		dir, lo, hi, len(lo)+1)
	if err != nil {
		return nil, d.fail(ctx, dir, err)
	}
	var out []backend.Entry
	for rows.Next() {
		var e backend.Entry
		if err := rows.Scan(&e.Name, &e.Dir); err != nil {
			rows.Close()
			return nil, d.fail(ctx, dir, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, d.fail(ctx, dir, err)
	}
	return out, nil
}

// ReadDir reads every object directly under dir with its bytes, in one query.
func (d *Driver) ReadDir(ctx context.Context, dir string) ([]backend.Object, error) {
	rows, err := d.pool.Query(ctx, `SELECT name, data, version FROM kumo_objects WHERE dir = $1`, dir)
	if err != nil {
		return nil, d.fail(ctx, dir, err)
	}
	var out []backend.Object
	for rows.Next() {
		var o backend.Object
		var version int64
		if err := rows.Scan(&o.Name, &o.Data, &version); err != nil {
			rows.Close()
			return nil, d.fail(ctx, dir, err)
		}
		o.Version = strconv.FormatInt(version, 10)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, d.fail(ctx, dir, err)
	}
	return out, nil
}

// Delete removes one row, or fails with ErrNotFound.
func (d *Driver) Delete(ctx context.Context, key string) error {
	tag, err := d.pool.Exec(ctx, `DELETE FROM kumo_objects WHERE key = $1`, key)
	if err != nil {
		return d.fail(ctx, key, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", d.Where(key), backend.ErrNotFound)
	}
	return nil
}

// DeleteAll removes the rows under dir in one statement.
func (d *Driver) DeleteAll(ctx context.Context, dir string) error {
	lo, hi := below(dir)
	if _, err := d.pool.Exec(ctx, `DELETE FROM kumo_objects WHERE dir = $1 OR (dir >= $2 AND dir < $3)`, dir, lo, hi); err != nil {
		return d.fail(ctx, dir, err)
	}
	return nil
}
