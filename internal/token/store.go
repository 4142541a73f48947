package token

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kumoproj/kumo/internal/privfile"
)

// RecordsFile is the token records' file in the auth directory.
const RecordsFile = "tokens.json"

const lockFile = "tokens.lock"

// Record is what kumo keeps of a token it issued: everything but the token.
type Record struct {
	ID      string    `json:"id"`
	Subject string    `json:"subject"`
	Groups  []string  `json:"groups,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Revoked is when the token was revoked; nil while it is not.
	Revoked *time.Time `json:"revoked,omitempty"`
}

// State is "active", "expired" or "revoked" at now.
func (r Record) State(now time.Time) string {
	switch {
	case r.Revoked != nil:
		return "revoked"
	case !now.Before(r.Expires):
		return "expired"
	}
	return "active"
}

type recordsFile struct {
	Tokens []Record `json:"tokens"`
}

// Store issues, lists and revokes tokens in one auth directory
// ($KUMO_HOME/auth).
type Store struct {
	dir string
	// Now is the clock (tests set it).
	Now func() time.Time
}

// Open returns the store of the auth directory dir. Nothing is created until
// a token is.
func Open(dir string) *Store { return &Store{dir: dir, Now: time.Now} }

// Dir is the auth directory.
func (s *Store) Dir() string { return s.dir }

// Create issues a token for subject and groups that expires after ttl, and
// records it. The token is returned once: kumo keeps only its record.
func (s *Store) Create(subject string, groups []string, ttl time.Duration) (string, Record, error) {
	if err := CheckName("subject", subject); err != nil {
		return "", Record{}, err
	}
	for _, g := range groups {
		if err := CheckName("group", g); err != nil {
			return "", Record{}, err
		}
	}
	if err := CheckTTL(ttl); err != nil {
		return "", Record{}, err
	}
	key, err := loadOrCreateKey(s.dir)
	if err != nil {
		return "", Record{}, err
	}
	idBytes := make([]byte, 8)
	if _, err := rand.Read(idBytes); err != nil {
		return "", Record{}, err
	}
	now := s.Now().UTC().Truncate(time.Second)
	groups = slices.Clone(groups)
	slices.Sort(groups)
	groups = slices.Compact(groups)
	rec := Record{ID: "t" + hex.EncodeToString(idBytes), Subject: subject, Groups: groups, Created: now, Expires: now.Add(ttl)}
	tok, err := sign(key, Claims{Version: 1, KeyID: key.id, ID: rec.ID, Subject: subject, Groups: groups, Issued: now, Expires: rec.Expires})
	if err != nil {
		return "", Record{}, err
	}
	// Recorded before it is handed out: a token without a record never verifies.
	err = s.update(func(f *recordsFile) error {
		f.Tokens = append(f.Tokens, rec)
		return nil
	})
	if err != nil {
		return "", Record{}, err
	}
	return tok, rec, nil
}

// List returns every record, oldest first.
func (s *Store) List() ([]Record, error) {
	f, err := readRecords(filepath.Join(s.dir, RecordsFile))
	if err != nil {
		return nil, err
	}
	return f.Tokens, nil
}

// ErrNotFound: no token has that ID.
var ErrNotFound = errors.New("no such token")

// Revoke revokes the token with id. Revoking a revoked token changes nothing
// and returns its record, whose Revoked says when it was.
func (s *Store) Revoke(id string) (Record, error) {
	var rec Record
	err := s.update(func(f *recordsFile) error {
		for i := range f.Tokens {
			if f.Tokens[i].ID != id {
				continue
			}
			if f.Tokens[i].Revoked == nil {
				now := s.Now().UTC().Truncate(time.Second)
				f.Tokens[i].Revoked = &now
			}
			rec = f.Tokens[i]
			return nil
		}
		return fmt.Errorf("token %q: %w (kumo token list shows the IDs)", id, ErrNotFound)
	})
	return rec, err
}

// update applies change to the records under an exclusive lock and writes
// them back whole: to a new file, synced, renamed over the old one, so a
// reader sees the old or the new records, never a mix.
func (s *Store) update(change func(*recordsFile) error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("token records: %w", err)
	}
	unlock, err := lock(filepath.Join(s.dir, lockFile))
	if err != nil {
		return err
	}
	defer unlock()
	path := filepath.Join(s.dir, RecordsFile)
	f, err := readRecords(path)
	if err != nil {
		return err
	}
	if err := change(&f); err != nil {
		return err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := privfile.Replace(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("token records %s: %w", path, err)
	}
	return nil
}

// readRecords reads the records at path; a missing file is no record.
func readRecords(path string) (recordsFile, error) {
	var f recordsFile
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("token records: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("token records %s: %w", path, err)
	}
	return f, nil
}

// lock takes an exclusive flock on path (privfile.Lock), waiting for other
// writers.
func lock(path string) (unlock func(), err error) {
	unlock, err = privfile.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("token records lock %s: %w", path, err)
	}
	return unlock, nil
}
