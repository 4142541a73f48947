package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPeakRSS: memory touched after a reset raises the high-water mark (by at
// least half its size: the allocator may reuse pages already resident), and a
// reset brings the mark back down once it is freed.
func TestPeakRSS(t *testing.T) {
	if err := resetPeakRSS(); err != nil {
		t.Skipf("cannot reset the peak RSS here: %v", err)
	}
	before, err := peakRSS()
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	buf := make([]byte, size)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	after, err := peakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after-before < size/2 {
		t.Fatalf("peak RSS %d -> %d after touching %d bytes", before, after, size)
	}
	buf = nil
	if err := resetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	reset, err := peakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if reset > after-size/2 { // the kernel reads its counters approximately: a few pages either way
		t.Fatalf("peak RSS %d after freeing and resetting, was %d", reset, after)
	}
}

// TestDBUsed: rows written to a SQLite database in WAL mode count at once,
// before any checkpoint, and deleting them gives the pages back.
func TestDBUsed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "test.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil { // openDB opens, never creates
		t.Fatal(err)
	}
	db, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{"PRAGMA journal_mode=wal", "PRAGMA wal_autocheckpoint=0", "CREATE TABLE t (b BLOB)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	empty, err := dbUsed(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	if _, err := db.Exec("INSERT INTO t VALUES (zeroblob(?))", size); err != nil {
		t.Fatal(err)
	}
	full, err := dbUsed(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if full-empty < size {
		t.Fatalf("used %d -> %d bytes after writing %d", empty, full, size)
	}
	if _, err := db.Exec("DELETE FROM t"); err != nil {
		t.Fatal(err)
	}
	if freed, err := dbUsed(ctx, db); err != nil || freed-empty >= size {
		t.Fatalf("used %d bytes after deleting (empty: %d), %v", freed, empty, err)
	}
}
