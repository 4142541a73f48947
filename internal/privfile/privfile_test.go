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
