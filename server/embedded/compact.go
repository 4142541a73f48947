package embedded

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
)

// A database is compacted at start when at least compactMinFree bytes, and at
// least a quarter of the file, are free pages. SQLite reuses free pages for new
// rows, so a running server's file stops growing once retention deletes as
// much as the runs add; what retention freed before a quieter period is given
// back to the file system by the next start. Below the threshold a VACUUM,
// which rewrites the whole file, costs more than the space it returns.
const (
	compactMinFree  = 64 << 20
	compactFraction = 4
)

// compaction is what compact found and did.
type compaction struct {
	// Before and After are the database's size in bytes (page count × page
	// size) before and after; equal when it was left as it was.
	Before, After int64
	// Free is the bytes of free pages found.
	Free int64
}

// Compacted reports whether the file was rewritten.
func (c compaction) Compacted() bool { return c.After != c.Before }

// compact VACUUMs the database at path when its free pages reach minFree bytes
// and 1/compactFraction of it. It must run before the server opens the file
// (Start holds the directory's lock): VACUUM needs the database to itself.
func compact(path string, minFree int64) (c compaction, err error) {
	q := url.Values{}
	q.Set("mode", "rw")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return c, fmt.Errorf("embedded temporal: compact %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	db.SetMaxOpenConns(1)
	size := func() (total, free int64, err error) {
		var pageSize, pages, freePages int64
		for _, p := range []struct {
			pragma string
			into   *int64
		}{{"page_size", &pageSize}, {"page_count", &pages}, {"freelist_count", &freePages}} {
			if err := db.QueryRow("PRAGMA " + p.pragma).Scan(p.into); err != nil {
				return 0, 0, fmt.Errorf("embedded temporal: compact %s: %s: %w", path, p.pragma, err)
			}
		}
		return pages * pageSize, freePages * pageSize, nil
	}
	if c.Before, c.Free, err = size(); err != nil {
		return c, err
	}
	c.After = c.Before
	if c.Free < minFree || c.Free*compactFraction < c.Before {
		return c, nil
	}
	// A WAL left by a killed server is folded in first, so VACUUM sees the
	// database as it was last committed.
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return c, fmt.Errorf("embedded temporal: compact %s: checkpoint: %w", path, err)
	}
	if _, err := db.Exec("VACUUM"); err != nil {
		return c, fmt.Errorf("embedded temporal: compact %s: %w", path, err)
	}
	if c.After, _, err = size(); err != nil {
		return c, err
	}
	return c, nil
}
