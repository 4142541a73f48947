package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestRestartKeepsCommits: every transaction the server acknowledged before
// Restart (a crash: immediate stop) is there after it. Temporal's services
// and kumo's postgres backend act on an acknowledged commit; a cluster that
// loses the last ones (asynchronous commit) rewinds a workflow's history
// under a running history service, which is not a failure production
// PostgreSQL has.
func TestRestartKeepsCommits(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := s.Database(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE acked (n int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	// One transaction per row, the restart right after the last: the
	// commits a crash could lose are the newest.
	const rows = 200
	for i := range rows {
		if _, err := conn.Exec(ctx, "INSERT INTO acked VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, last int
	if err := conn.QueryRow(ctx, "SELECT count(*), coalesce(max(n), -1) FROM acked").Scan(&n, &last); err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Errorf("after a restart %d of %d acknowledged commits are there (the last: row %d)", n, rows, last)
	}
}
