package input

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRefusesInputOverTheLimit: a file over the limit is refused before it
// is read, standard input after one byte more than the limit.
func TestReadRefusesInputOverTheLimit(t *testing.T) {
	SetMaxSize(1 << 10)
	t.Cleanup(func() { SetMaxSize(0) })
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("a: "+strings.Repeat("x", 2000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	checkTooLarge(t, err, path+": 2 KiB is over the input size limit of 1 KiB (raise it with --max-input-size or $KUMO_MAX_INPUT_SIZE)")

	endless := &countingReader{}
	_, err = Read(endless, "<stdin>")
	checkTooLarge(t, err, "<stdin>: more than 1 KiB is over the input size limit of 1 KiB")
	if endless.n > 1<<10+1 {
		t.Errorf("read %d bytes of standard input, want at most the limit and one", endless.n)
	}

	SetMaxSize(4 << 10)
	if data, err := ReadFile(path); err != nil || len(data) != 2004 {
		t.Errorf("ReadFile under the limit: %d bytes, %v", len(data), err)
	}
}

func checkTooLarge(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// countingReader is an endless input that counts what was read of it.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.n += len(p)
	return len(p), nil
}
