package token

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kumoproj/kumo/internal/privfile"
)

// KeyFile is the signing key's file in the auth directory.
const KeyFile = "token-signing.key"

const keySize = 32

const keyHeader = "# kumo token signing key: \"<id> <base64 of 32 bytes>\". Anyone who reads it can\n" +
	"# mint tokens for any subject: keep it secret (mode 0600).\n"

// signingKey is the HMAC-SHA256 key tokens are signed with, and its ID.
type signingKey struct {
	id  string
	key []byte
}

// loadOrCreateKey loads dir's signing key, creating it (and dir, mode 0700)
// on first use. Of processes creating it at once, one file wins and all of
// them load it.
func loadOrCreateKey(dir string) (signingKey, error) {
	path := filepath.Join(dir, KeyFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := createKey(path); err != nil {
			return signingKey{}, err
		}
	}
	return loadKey(path)
}

// loadKey reads the key at path; a key another account could read is
// refused, as it may have been copied.
func loadKey(path string) (signingKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return signingKey{}, fmt.Errorf("token signing key %s does not exist: no kumo token was ever created with this home (kumo token create)", path)
		}
		return signingKey{}, fmt.Errorf("token signing key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return signingKey{}, fmt.Errorf("token signing key %s is readable by other accounts (mode %v): it may have been copied; make it mode 0600 (chmod 600 %s), or remove it and the tokens file to start over", path, st.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return signingKey{}, fmt.Errorf("token signing key: %w", err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return signingKey{}, fmt.Errorf("token signing key %s:%d: want \"<id> <base64 key>\"", path, n+1)
		}
		key, err := base64.StdEncoding.DecodeString(fields[1])
		if err != nil || len(key) != keySize {
			return signingKey{}, fmt.Errorf("token signing key %s:%d: the key is not the base64 of %d bytes", path, n+1, keySize)
		}
		return signingKey{id: fields[0], key: key}, nil
	}
	return signingKey{}, fmt.Errorf("token signing key %s holds no key", path)
}

// createKey writes a new key at path unless one appears meanwhile
// (privfile.CreateOnce).
func createKey(path string) error {
	key := make([]byte, keySize)
	id := make([]byte, 4)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("token signing key: %w", err)
	}
	if _, err := rand.Read(id); err != nil {
		return fmt.Errorf("token signing key: %w", err)
	}
	line := fmt.Sprintf("%sk%s %s\n", keyHeader, hex.EncodeToString(id), base64.StdEncoding.EncodeToString(key))
	if err := privfile.CreateOnce(path, []byte(line)); err != nil {
		return fmt.Errorf("token signing key: %w", err)
	}
	return nil
}
