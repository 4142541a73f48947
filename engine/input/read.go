package input

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads a user's file (a spec, manifests, a workspace, project, stack
// or app file), refusing one over MaxSize before reading it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxSize() {
		return nil, TooLarge(path, st.Size())
	}
	return Read(f, path)
}

// Read reads r (standard input, say) up to MaxSize: one byte more is an error
// naming source, and the rest is not read.
func Read(r io.Reader, source string) ([]byte, error) {
	limit := MaxSize()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	if int64(len(data)) > limit {
		return nil, TooLarge(source, -1)
	}
	return data, nil
}
