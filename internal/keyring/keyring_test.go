package keyring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateMakesPrivateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", FileName)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			r, err := LoadOrCreate(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.CurrentID()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("concurrent creators saw different keys: %v", ids)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestRotationNewestEncryptsAllDecrypt(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	old, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	sealedOld, err := old.Seal([]byte("before rotation"), testAAD)
	if err != nil {
		t.Fatal(err)
	}
	newID, err := AddKey(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.CurrentID() != newID || newID == old.CurrentID() || len(r.IDs()) != 2 {
		t.Fatalf("after AddKey: current %s, ids %v; want new key %s last", r.CurrentID(), r.IDs(), newID)
	}
	sealedNew, err := r.Seal([]byte("after rotation"), testAAD)
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := SplitSealed(sealedNew); id != newID {
		t.Errorf("sealed with %s, want the newest key %s", id, newID)
	}
	for sealed, want := range map[string]string{sealedOld: "before rotation", sealedNew: "after rotation"} {
		got, err := r.Open(sealed, testAAD)
		if err != nil || string(got) != want {
			t.Errorf("Open = %q, %v; want %q", got, err, want)
		}
	}
	// The old ring lacks the new key: the error names it.
	_, err = old.Open(sealedNew, testAAD)
	var unknown *UnknownKeyError
	if !errors.As(err, &unknown) || unknown.KeyID != newID || !strings.Contains(err.Error(), newID) {
		t.Errorf("opening with a ring that lacks the key: %v", err)
	}
}

func TestSameIDOtherKeyIsRefused(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreate(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	// Another file with a different key under a's ID.
	line, _, err := newKeyLine()
	if err != nil {
		t.Fatal(err)
	}
	_, enc, _ := strings.Cut(strings.TrimSpace(line), " ")
	other := filepath.Join(dir, "b")
	if err := os.WriteFile(other, []byte(a.CurrentID()+" "+enc+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Load(other)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := a.Seal([]byte("x"), testAAD)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(sealed, testAAD); err == nil || !strings.Contains(err.Error(), a.CurrentID()) {
		t.Errorf("a different key under the same ID: %v", err)
	}
}

func TestMalformedKeyFiles(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ content, want string }{
		"short":   {"k1 AAAA\n", ":1: key k1 is not the base64 of 32 bytes"},
		"fields":  {"# c\nk1\n", ":2: want"},
		"badid":   {"k/1 " + strings.Repeat("A", 44) + "\n", `key ID "k/1"`},
		"empty":   {"# nothing\n", "holds no key"},
		"twice":   {"k1 " + strings.Repeat("A", 43) + "=\nk1 " + strings.Repeat("B", 43) + "=\n", "k1 appears twice"},
		"missing": {"", "does not exist"},
	} {
		path := filepath.Join(dir, name)
		if name != "missing" {
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming %s with %q", name, err, path, c.want)
		}
	}
}

var testAAD = AAD("release", "p", "w", "v1:Secret:ns:db", "/data/password")

// A value is bound to its place: other parts do not open it, whichever way
// they could be joined into the same text.
func TestSealedValueIsBoundToItsPlace(t *testing.T) {
	r, err := LoadOrCreate(filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := r.Seal([]byte("pw"), AAD("release", "a/b", "c", "id", "/data/x"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Open(sealed, AAD("release", "a/b", "c", "id", "/data/x")); err != nil || string(got) != "pw" {
		t.Fatalf("Open in its own place = %q, %v", got, err)
	}
	for _, other := range [][]byte{
		AAD("release", "a", "b/c", "id", "/data/x"),
		AAD("release", "a/b", "c", "id", "/data/y"),
		AAD("release", "a/b", "c", "other", "/data/x"),
		AAD("release", "a/bc", "", "id", "/data/x"),
		legacyAAD,
	} {
		if _, err := r.Open(sealed, other); err == nil {
			t.Errorf("opened under %s", other)
		}
		if _, err := r.OpenLegacy(sealed); err == nil {
			t.Errorf("a bound value opened as a legacy one")
		}
	}
	legacy, err := r.SealLegacy([]byte("old"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.OpenLegacy(legacy); err != nil || string(got) != "old" {
		t.Errorf("OpenLegacy = %q, %v", got, err)
	}
	if _, err := r.Open(legacy, AAD("release", "a/b", "c", "id", "/data/x")); err == nil {
		t.Error("a legacy value opened as a bound one")
	}
}
