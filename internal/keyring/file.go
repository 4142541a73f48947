package keyring

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kumoproj/kumo/internal/privfile"
)

// FileName is the key file kumo creates in $KUMO_HOME for the embedded server
// and `kumo server`.
const FileName = "codec.keys"

const header = "# kumo codec keys: one per line, \"<id> <base64 of 32 bytes>\".\n" +
	"# The last key encrypts; every key decrypts. Keep this file secret (mode 0600).\n"

// Load reads the key file at path. A missing file, a malformed line or no key
// at all is an error naming the file (and the line).
func Load(path string) (*Ring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("codec key file %s does not exist (create one with `kumo codec new-key %s`)", path, path)
		}
		return nil, fmt.Errorf("codec key file: %w", err)
	}
	r := &Ring{path: path}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("codec key file %s:%d: want \"<id> <base64 key>\"", path, n)
		}
		id, enc := fields[0], fields[1]
		if err := validID(id); err != nil {
			return nil, fmt.Errorf("codec key file %s:%d: %w", path, n, err)
		}
		key, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(key) != keySize {
			return nil, fmt.Errorf("codec key file %s:%d: key %s is not the base64 of %d bytes", path, n, id, keySize)
		}
		if err := r.add(id, key); err != nil {
			return nil, fmt.Errorf("codec key file %s:%d: %w", path, n, err)
		}
	}
	if len(r.keys) == 0 {
		return nil, fmt.Errorf("codec key file %s holds no key", path)
	}
	return r, nil
}

// LoadOrCreate loads the key file at path, first creating it (mode 0600, one
// new key) if there is none. Of processes creating it at once, one file wins
// and all of them load it.
func LoadOrCreate(path string) (*Ring, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := create(path); err != nil {
			return nil, err
		}
	}
	return Load(path)
}

// create writes a new key file at path unless one appears meanwhile: the file
// is written whole under another name and linked into place, which fails if
// path exists.
func create(path string) error {
	line, _, err := newKeyLine()
	if err != nil {
		return err
	}
	if err := privfile.CreateOnce(path, []byte(header+line)); err != nil {
		return fmt.Errorf("codec key file: %w", err)
	}
	return nil
}

// AddKey appends a new key to the key file at path (creating it, mode 0600, if
// there is none) and returns its ID: from now on it encrypts, and the older keys
// still decrypt.
func AddKey(path string) (string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := create(path); err != nil {
			return "", err
		}
		r, err := Load(path)
		if err != nil {
			return "", err
		}
		return r.CurrentID(), nil
	}
	if _, err := Load(path); err != nil {
		return "", err
	}
	line, id, err := newKeyLine()
	if err != nil {
		return "", err
	}
	if data, err := os.ReadFile(path); err == nil && len(data) > 0 && data[len(data)-1] != '\n' {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", fmt.Errorf("codec key file: %w", err)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return "", fmt.Errorf("codec key file %s: %w", path, err)
	}
	return id, f.Close()
}

// newKeyLine makes a random key and its line; the ID is random too, so keys
// made on different machines never share one.
func newKeyLine() (line, id string, err error) {
	key := make([]byte, keySize)
	idBytes := make([]byte, 4)
	if _, err := rand.Read(key); err != nil {
		return "", "", fmt.Errorf("codec key: %w", err)
	}
	if _, err := rand.Read(idBytes); err != nil {
		return "", "", fmt.Errorf("codec key: %w", err)
	}
	id = "k" + hex.EncodeToString(idBytes)
	return id + " " + base64.StdEncoding.EncodeToString(key) + "\n", id, nil
}

// validID: key IDs go into payload metadata and sealed values, so they are
// short and plain.
func validID(id string) error {
	if len(id) > 64 {
		return fmt.Errorf("key ID %.64q... is longer than 64 characters", id)
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("key ID %q: use letters, digits, '-', '_' and '.' only", id)
		}
	}
	return nil
}
