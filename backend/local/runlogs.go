package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
)

const (
	runsDir   = "runs"
	runLogExt = ".log"
)

// PutRunLog stores one part of a run's log, replacing an earlier write of the part.
func (b *Backend) PutRunLog(ctx context.Context, runID, part string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := codec.CheckRunLogPart(runID, part); err != nil {
		return err
	}
	dir := filepath.Join(b.root, runsDir, runID)
	if err := ensureDir(b.root, dir); err != nil {
		return fmt.Errorf("put run log of %s: %w", runID, err)
	}
	b.written.Add(int64(len(data)))
	if err := replaceFile(filepath.Join(dir, part+runLogExt), data); err != nil {
		return fmt.Errorf("put run log of %s: %w", runID, err)
	}
	return nil
}

// RunLog returns a run's log parts concatenated in name order, or an error wrapping
// backend.ErrNotFound when the run has none.
func (b *Backend) RunLog(ctx context.Context, runID string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.ValidateName("run", runID); err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	dir := filepath.Join(b.root, runsDir, runID)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("log of run %s: %w", runID, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("log of run %s: %w", runID, err)
	}
	var parts []string
	for _, e := range ents {
		part, ok := strings.CutSuffix(e.Name(), runLogExt)
		if ok && e.Type().IsRegular() && backend.ValidateName("log part", part) == nil {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("log of run %s: %w", runID, backend.ErrNotFound)
	}
	// By part name, not file name: "a-b.log" sorts before "a.log", but "a" before "a-b".
	slices.Sort(parts)
	var out bytes.Buffer
	for _, part := range parts {
		data, err := os.ReadFile(filepath.Join(dir, part+runLogExt))
		if err != nil {
			return nil, fmt.Errorf("log of run %s: %w", runID, err)
		}
		out.Write(data)
	}
	return out.Bytes(), nil
}
