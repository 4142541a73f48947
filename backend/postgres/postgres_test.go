package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/pgtest"
)

var ctx = context.Background()

// TestConformance runs the conformance suite against a real PostgreSQL; every
// subtest gets a database of its own.
func TestConformance(t *testing.T) {
	srv := pgtest.Start(t)
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		d, err := NewDriver(ctx, srv.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		return d
	})
}

func TestURLs(t *testing.T) {
	for _, raw := range []string{
		"postgres://kumo:s3cret@db.example:5432/kumo",
		"postgresql://kumo@db.example/kumo?sslmode=require&password=s3cret",
	} {
		_, err := NewDriver(ctx, raw)
		if err == nil || !strings.Contains(err.Error(), "PGPASSWORD") {
			t.Errorf("%s: %v, want a refusal pointing at PGPASSWORD", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error prints the password: %v", err)
		}
		if r := Redact(raw); strings.Contains(r, "s3cret") {
			t.Errorf("Redact(%q) = %q", raw, r)
		}
	}
	for _, raw := range []string{"mysql://db/kumo", "postgres://db/kumo#x"} {
		if _, err := NewDriver(ctx, raw); err == nil || !strings.Contains(err.Error(), "backend URL") {
			t.Errorf("%s: %v, want a refusal", raw, err)
		}
	}
}

// TestCredentials: the password comes from PGPASSWORD or the password file;
// a wrong one fails at open, naming the database without a password.
func TestCredentials(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	bare, _, _ := strings.Cut(url, "&passfile=")
	t.Setenv("PGPASSFILE", "/nonexistent")
	t.Setenv("PGPASSWORD", "wrong-password")
	_, err := NewDriver(ctx, bare)
	if err == nil || !strings.Contains(err.Error(), "cannot connect") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("the error prints the password: %v", err)
	}
	t.Setenv("PGPASSWORD", srv.Password)
	d, err := NewDriver(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

// TestSchemaMigrations: a database at version 1 is migrated to the current
// one; a database whose schema is newer than this kumo is refused, and left
// as it was.
func TestSchemaMigrations(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	old, err := newDriver(ctx, url, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Write(ctx, "releases/p/w/1.yaml", []byte("x"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	d, err := NewDriver(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := schemaOf(t, url); got != SchemaVersion {
		t.Fatalf("schema version %d after open, want %d", got, SchemaVersion)
	}
	var n int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE indexname = 'kumo_objects_dir'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migration 2's index: %d, %v", n, err)
	}
	if data, _, err := d.Read(ctx, "releases/p/w/1.yaml"); err != nil || string(data) != "x" {
		t.Fatalf("a row written before the migration: %q, %v", data, err)
	}
	if _, err := d.pool.Exec(ctx, `UPDATE kumo_schema SET version = $1`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err = NewDriver(ctx, url)
	want := fmt.Sprintf("schema is version %d, this kumo knows versions up to %d: upgrade kumo", SchemaVersion+1, SchemaVersion)
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("newer schema: %v\nwant it to say %q", err, want)
	}
	if got := schemaOf(t, url); got != SchemaVersion+1 {
		t.Fatalf("the refused open changed the schema version to %d", got)
	}
}

func schemaOf(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT version FROM kumo_schema`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestConcurrentOpens: kumos opening a new database at once migrate it once.
func TestConcurrentOpens(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			d, err := NewDriver(ctx, url)
			if err == nil {
				d.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// countingDriver counts the requests that reach the database.
type countingDriver struct {
	*Driver
	reads, dirReads atomic.Int64
}

func (c *countingDriver) Read(ctx context.Context, key string) ([]byte, string, error) {
	c.reads.Add(1)
	return c.Driver.Read(ctx, key)
}

func (c *countingDriver) ReadDir(ctx context.Context, dir string) ([]backend.Object, error) {
	c.dirReads.Add(1)
	return c.Driver.ReadDir(ctx, dir)
}

// TestListReleasesIsOneQuery: listing 300 revisions reads them in one query,
// and gives what reading each one gives.
func TestListReleasesIsOneQuery(t *testing.T) {
	srv := pgtest.Start(t)
	d, err := NewDriver(ctx, srv.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c := &countingDriver{Driver: d}
	b := backend.NewStore(c)
	const n = 300
	for i := 1; i <= n; i++ {
		r := backendtest.Release("p", "w", i)
		r.Phase = engine.PhaseSucceeded
		if err := b.CreateRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	c.reads.Store(0)
	sums, err := b.ListReleaseSummaries(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.dirReads.Load(); got != 1 || c.reads.Load() != 0 {
		t.Fatalf("listing %d revisions (release list): %d directory reads and %d reads, want 1 and 0", n, got, c.reads.Load())
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n || len(sums) != n {
		t.Fatalf("%d releases and %d summaries, want %d", len(list), len(sums), n)
	}
	for i, r := range list {
		one, err := b.GetRelease(ctx, "p", "w", i+1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision != i+1 || r.Version != one.Version || r.SpecHash != one.SpecHash {
			t.Fatalf("listed revision %d (version %s) differs from the one read alone (revision %d, version %s)", r.Revision, r.Version, one.Revision, one.Version)
		}
		if s := sums[i].Release; s.Revision != i+1 || s.Version != one.Version {
			t.Fatalf("summary of revision %d (version %s) differs from the release (version %s)", s.Revision, s.Version, one.Version)
		}
	}
	// A revision removed by hand is named, not skipped.
	if err := d.Delete(ctx, "releases/p/w/7.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ListReleases(ctx, "p", "w"); !errors.Is(err, backend.ErrNotFound) || !strings.Contains(err.Error(), "revision 7 is missing") {
		t.Fatalf("listing with a gap: %v", err)
	}
}
