package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/backend"
)

// What a kumo run costs besides time: the process's memory, the embedded
// server's database, the backend's writes.

// resetPeakRSS makes the kernel's high-water mark of this process's resident
// memory (VmHWM) start again from what is resident now (Linux: writing 5 to
// clear_refs). The garbage the previous rows left is collected and returned to
// the kernel first, so it does not count against the next row.
func resetPeakRSS() error {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is this process's VmHWM in bytes: the most resident memory since the
// last resetPeakRSS.
func peakRSS() (int64, error) { return procStatus("VmHWM:") }

// residentRSS is this process's resident memory now (VmRSS), in bytes.
func residentRSS() (int64, error) { return procStatus("VmRSS:") }

// procStatus reads a field of /proc/self/status given in kB, in bytes.
func procStatus(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status: no %s", strings.TrimSuffix(field, ":"))
}

// openDB opens a second connection on the embedded server's SQLite database
// (driver "sqlite", which the server's SQLite plugin registers), for reading
// its size only; WAL lets it read while the server writes.
func openDB(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("mode", "rw")
	q.Add("_pragma", "busy_timeout(5000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// dbUsed is how many bytes of the database hold data: its pages less the free
// ones, as of the last commit (the WAL's pages included, whether or not they
// were checkpointed into the main file yet). File sizes would not do: the WAL
// file is reused in place after each checkpoint and freed pages stay in the
// main file.
func dbUsed(ctx context.Context, db *sql.DB) (int64, error) {
	var pages, free, size int64
	for _, p := range []struct {
		pragma string
		v      *int64
	}{{"page_count", &pages}, {"freelist_count", &free}, {"page_size", &size}} {
		if err := db.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.v); err != nil {
			return 0, fmt.Errorf("embedded database: PRAGMA %s: %w", p.pragma, err)
		}
	}
	return (pages - free) * size, nil
}

// bytesWritten is what b has handed its storage to write so far, overwrites
// included (backend.Store counts it).
func bytesWritten(b backend.Backend) (int64, error) {
	w, ok := b.(interface{ BytesWritten() int64 })
	if !ok {
		return 0, fmt.Errorf("backend %T does not count the bytes it writes", b)
	}
	return w.BytesWritten(), nil
}

// stateSize is the size of the latest release's state as the backend encodes
// it in the release file (YAML; JSON form for a large one).
func stateSize(ctx context.Context, b backend.Backend, project string) (int64, error) {
	rel, err := b.LatestRelease(ctx, project, "default")
	if err != nil {
		return 0, err
	}
	if rel.State == nil {
		return 0, fmt.Errorf("%s: latest release has no state", project)
	}
	n, err := backend.RecordSize(rel.State)
	return int64(n), err
}
