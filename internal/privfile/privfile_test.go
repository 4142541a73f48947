package privfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestCreateOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "secret")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := CreateOnce(path, []byte{byte('a' + i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil || len(data) != 1 {
		t.Fatalf("file: %q, %v; want one writer's byte", data, err)
	}
	if err := CreateOnce(path, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Errorf("an existing file was replaced: %q", again)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, data := range []string{"one", "two"} {
		if err := Replace(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Errorf("read %q, want %q", got, data)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".f.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock, err := Lock(path)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders at once", most)
	}
}
