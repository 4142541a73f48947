package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// keySize is AES-256's.
const keySize = 32

// Ring is the keys of one key file. It is safe for concurrent use.
type Ring struct {
	path string
	keys []key // in file order: the last is the newest
}

type key struct {
	id   string
	aead cipher.AEAD
}

func (r *Ring) add(id string, k []byte) error {
	if _, ok := r.find(id); ok {
		return fmt.Errorf("key ID %s appears twice", id)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	r.keys = append(r.keys, key{id: id, aead: aead})
	return nil
}

func (r *Ring) find(id string) (cipher.AEAD, bool) {
	for _, k := range r.keys {
		if k.id == id {
			return k.aead, true
		}
	}
	return nil, false
}

// Path is the key file the ring was read from.
func (r *Ring) Path() string { return r.path }

// CurrentID is the ID of the key that encrypts: the file's last.
func (r *Ring) CurrentID() string { return r.keys[len(r.keys)-1].id }

// IDs lists the key IDs, oldest first.
func (r *Ring) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

// Encrypt seals plaintext with the current key (AES-256-GCM, a random nonce
// before the ciphertext), binding aad, and returns the key's ID with it.
func (r *Ring) Encrypt(plaintext, aad []byte) (id string, ciphertext []byte, err error) {
	k := r.keys[len(r.keys)-1]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("encrypt: %w", err)
	}
	return k.id, k.aead.Seal(nonce, nonce, plaintext, aad), nil
}

// Decrypt opens what Encrypt returned under key id. An unknown ID, or data that
// does not open under that key (another key with the same ID, or tampered
// data), is an error naming the key and the file.
func (r *Ring) Decrypt(id string, ciphertext, aad []byte) ([]byte, error) {
	aead, ok := r.find(id)
	if !ok {
		return nil, &UnknownKeyError{KeyID: id, Path: r.path, Have: r.IDs()}
	}
	n := aead.NonceSize()
	if len(ciphertext) < n+aead.Overhead() {
		return nil, fmt.Errorf("data encrypted with key %s is truncated (%d bytes)", id, len(ciphertext))
	}
	plain, err := aead.Open(nil, ciphertext[:n], ciphertext[n:], aad)
	if err != nil {
		return nil, fmt.Errorf("data encrypted with key %s does not decrypt with the key %s holds under that ID: another key of the same ID, or altered data", id, r.path)
	}
	return plain, nil
}

// UnknownKeyError: data was encrypted with a key the ring does not hold.
type UnknownKeyError struct {
	KeyID string
	Path  string
	Have  []string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("data encrypted with key %s, which the codec key file %s does not hold (it has %s): use the key file it was encrypted with (KUMO_CODEC_KEY_FILE, --codec-key-file)",
		e.KeyID, e.Path, strings.Join(e.Have, ", "))
}

// sealedPrefix starts a value sealed for a text file: "kumo:sealed:v1:<key
// ID>:<base64url of nonce and ciphertext>".
const sealedPrefix = "kumo:sealed:v1:"

// legacyAAD is the associated data every sealed value had before values were
// bound to their place: it only kept a payload's ciphertext from passing for a
// sealed value. Values sealed with it open only through OpenLegacy, which the
// backend uses for records it stored, never for values arriving in a spec.
var legacyAAD = []byte("kumo sealed value")

// sealedDomain starts the associated data of a sealed value bound to its place
// (see AAD), unlike any payload's or legacyAAD.
const sealedDomain = "kumo sealed value v2"

// AAD is the associated data binding a sealed value to where it is stored: the
// parts (for a release: "release", project, workspace, resource ID, field path)
// are encoded as a JSON array of strings, so no two lists of parts encode alike
// ("a/b","c" and "a","b/c" differ). A value opened with other parts fails.
func AAD(parts ...string) []byte {
	data, err := json.Marshal(append([]string{sealedDomain}, parts...))
	if err != nil {
		panic(err) // strings always marshal
	}
	return data
}

// Seal encrypts plaintext, bound to aad (see AAD), into one string that can
// stand in a YAML or JSON document where the clear value was.
func (r *Ring) Seal(plaintext, aad []byte) (string, error) {
	id, ct, err := r.Encrypt(plaintext, aad)
	if err != nil {
		return "", err
	}
	return sealedPrefix + id + ":" + base64.RawURLEncoding.EncodeToString(ct), nil
}

// Open decrypts a value Seal made with the same aad.
func (r *Ring) Open(sealed string, aad []byte) ([]byte, error) {
	id, enc, ok := SplitSealed(sealed)
	if !ok {
		return nil, fmt.Errorf("not a sealed value")
	}
	ct, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("value sealed with key %s is not valid base64", id)
	}
	return r.Decrypt(id, ct, aad)
}

// OpenLegacy decrypts a value sealed before values were bound to their place.
// Only stored records may be read this way (they are resealed bound on their
// next write).
func (r *Ring) OpenLegacy(sealed string) ([]byte, error) {
	return r.Open(sealed, legacyAAD)
}

// SealLegacy seals as kumo did before values were bound to their place: for
// tests proving such values still open.
func (r *Ring) SealLegacy(plaintext []byte) (string, error) {
	return r.Seal(plaintext, legacyAAD)
}

// IsSealed reports whether s is a value Seal made.
func IsSealed(s string) bool {
	_, _, ok := SplitSealed(s)
	return ok
}

// SplitSealed returns the key ID and the encoded ciphertext of a sealed value.
func SplitSealed(s string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, sealedPrefix)
	if !ok {
		return "", "", false
	}
	id, data, ok = strings.Cut(rest, ":")
	return id, data, ok && id != ""
}
