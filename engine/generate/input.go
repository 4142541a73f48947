package generate

import (
	"fmt"
	"io"
	"os"

	"github.com/kumoproj/kumo/engine"
)

// ReadFile reads a user's file (a spec, manifests, a workspace, project, stack
// or app file), refusing one over engine.MaxInputSize before reading it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > engine.MaxInputSize() {
		return nil, engine.InputTooLarge(path, st.Size())
	}
	return ReadInput(f, path)
}

// ReadInput reads r (standard input, say) up to engine.MaxInputSize: one byte
// more is an error naming source, and the rest is not read.
func ReadInput(r io.Reader, source string) ([]byte, error) {
	limit := engine.MaxInputSize()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	if int64(len(data)) > limit {
		return nil, engine.InputTooLarge(source, -1)
	}
	return data, nil
}
