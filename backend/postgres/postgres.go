package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kumoproj/kumo/backend"
)

// Backend stores kumo's records in a PostgreSQL database. It is safe for
// concurrent use by goroutines and by any number of processes and machines
// sharing the database.
type Backend struct {
	*backend.Store
	driver *Driver
}

var _ backend.Backend = (*Backend)(nil)

// Driver is the backend.Driver over one table of a PostgreSQL database.
type Driver struct {
	pool  *pgxpool.Pool
	where string // the URL without credentials, for messages
}

var (
	_ backend.Driver    = (*Driver)(nil)
	_ backend.DirReader = (*Driver)(nil)
)

// IsURL reports whether raw names a PostgreSQL backend.
func IsURL(raw string) bool {
	return strings.HasPrefix(raw, "postgres://") || strings.HasPrefix(raw, "postgresql://")
}

// Redact returns raw without a password (in the user part or the query), for
// messages; a URL that does not parse is replaced by its scheme alone.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, ":")
		return scheme + "://(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// checkURL refuses what kumo does not take from a backend URL: another scheme,
// and a password, which belongs in PGPASSWORD or a password file.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("backend URL %s: does not parse as postgres://user@host:port/database", Redact(raw))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("backend URL %s: want postgres://user@host:port/database", Redact(raw))
	}
	if _, ok := u.User.Password(); ok || u.Query().Has("password") {
		return fmt.Errorf("backend URL %s: holds a password: remove it and set PGPASSWORD, or put it in a password file (PGPASSFILE, default ~/.pgpass); a URL is seen in process lists and project files", Redact(raw))
	}
	if u.Fragment != "" {
		return fmt.Errorf("backend URL %s: a fragment is not allowed", Redact(raw))
	}
	return nil
}

// New connects to the database raw names, creates or migrates kumo's schema, and
// returns the backend; an unreachable server, refused credentials or a schema
// newer than this kumo fail here, before any run starts, naming the database.
func New(ctx context.Context, raw string) (*Backend, error) {
	d, err := NewDriver(ctx, raw)
	if err != nil {
		return nil, err
	}
	return &Backend{Store: backend.NewStore(d), driver: d}, nil
}

// NewDriver connects and migrates as New does, and returns the driver alone.
func NewDriver(ctx context.Context, raw string) (*Driver, error) {
	return newDriver(ctx, raw, SchemaVersion)
}

// newDriver migrates to schema version want (tests start from older ones).
func newDriver(ctx context.Context, raw string, want int) (*Driver, error) {
	if err := checkURL(raw); err != nil {
		return nil, err
	}
	where := "postgres backend " + Redact(raw)
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		// pgconn's parse errors may quote the connection string: say only what failed.
		var pe interface{ Unwrap() error }
		msg := "invalid connection settings"
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			msg += ": " + pe.Unwrap().Error()
		}
		return nil, fmt.Errorf("%s: %s", where, msg)
	}
	if !strings.Contains(raw, "pool_max_conns") {
		// An apply writes from up to its parallelism and a listing fetches 16 at
		// once; pgxpool's default (the CPU count, at least 4) would queue them.
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: cannot connect (check host, port, user, PGPASSWORD or the password file, sslmode): %w", where, err)
	}
	if err := migrate(ctx, pool, where, want); err != nil {
		pool.Close()
		return nil, err
	}
	return &Driver{pool: pool, where: where}, nil
}

// Close releases the connections.
func (b *Backend) Close() { b.driver.Close() }

// Close releases the driver's connections.
func (d *Driver) Close() { d.pool.Close() }

// String names the backend by its URL without credentials.
func (b *Backend) String() string { return strings.TrimPrefix(b.driver.where, "postgres backend ") }
