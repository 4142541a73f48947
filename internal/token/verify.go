package token

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Verifier checks tokens against one auth directory's key and records. It
// looks at the records file on every Verify (one stat) and re-reads it when
// it changed, so a `kumo token revoke` takes effect at the next request of a
// running server.
type Verifier struct {
	dir string
	key signingKey
	// Now is the clock (tests set it).
	Now func() time.Time

	mu      sync.Mutex
	stamp   fileStamp
	records map[string]Record
	loadErr error
}

// fileStamp tells whether the records file changed: a write renames a new
// file into place, so its inode changes even within one mtime tick.
type fileStamp struct {
	exists bool
	dev    uint64
	ino    uint64
	size   int64
	mtime  time.Time
}

// NewVerifier returns a verifier for the auth directory dir, creating the
// signing key if there is none yet (a server accepts kumo tokens from the
// start, and a token created later is signed by the same key).
func NewVerifier(dir string) (*Verifier, error) {
	key, err := loadOrCreateKey(dir)
	if err != nil {
		return nil, err
	}
	v := &Verifier{dir: dir, key: key, Now: time.Now}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refresh(); err != nil {
		return nil, err
	}
	return v, nil
}

// Verify checks tok's signature, expiry and record, and returns its claims.
// A refusal is an *Error saying why.
func (v *Verifier) Verify(_ context.Context, tok string) (Claims, error) {
	c, err := parse(v.key, tok)
	if err != nil {
		return Claims{}, err
	}
	if !v.Now().Before(c.Expires) {
		return Claims{}, &Error{Reason: Expired, ID: c.ID, detail: "expired at " + c.Expires.UTC().Format(time.RFC3339)}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refresh(); err != nil {
		// Fail closed: without the records, no revocation can be checked.
		return Claims{}, err
	}
	rec, ok := v.records[c.ID]
	switch {
	case !ok:
		return Claims{}, &Error{Reason: Unknown, ID: c.ID, detail: "no record of it in " + filepath.Join(v.dir, RecordsFile)}
	case rec.Revoked != nil:
		return Claims{}, &Error{Reason: Revoked, ID: c.ID, detail: "revoked at " + rec.Revoked.UTC().Format(time.RFC3339)}
	case rec.Subject != c.Subject || !slices.Equal(rec.Groups, c.Groups) || !rec.Expires.Equal(c.Expires):
		// Signed, yet not what was recorded: never let the two disagree.
		return Claims{}, &Error{Reason: BadSignature, ID: c.ID, detail: "claims differ from its record"}
	}
	return c, nil
}

// refresh re-reads the records if the file changed since the last read. A
// records file that cannot be read is an error until it can be, even if an
// older copy was read before.
func (v *Verifier) refresh() error {
	path := filepath.Join(v.dir, RecordsFile)
	st, err := stamp(path)
	if err != nil {
		v.stamp, v.records = fileStamp{}, nil
		return fmt.Errorf("kumo token refused: token records: %w", err)
	}
	if st == v.stamp && v.records != nil && v.loadErr == nil {
		return nil
	}
	f, err := readRecords(path)
	if err != nil {
		v.stamp, v.loadErr = st, err
		return fmt.Errorf("kumo token refused: %w", err)
	}
	recs := make(map[string]Record, len(f.Tokens))
	for _, r := range f.Tokens {
		recs[r.ID] = r
	}
	v.stamp, v.records, v.loadErr = st, recs, nil
	return nil
}

func stamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino = uint64(sys.Dev), uint64(sys.Ino)
	}
	return s, nil
}
