package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	if _, err := b.put(ctx, b.key(runsDir, runID, part+runLogExt), data, condition{}); err != nil {
		return fmt.Errorf("put run log of %s: %w", runID, err)
	}
	return nil
}

// RunLog returns a run's log parts concatenated in part-name order, or an error
// wrapping backend.ErrNotFound when the run has none.
func (b *Backend) RunLog(ctx context.Context, runID string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.ValidateName("run", runID); err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	prefix := b.key(runsDir, runID) + "/"
	var parts []string
	err := b.list(ctx, prefix, "/", func(k string, dir bool) error {
		part, ok := strings.CutSuffix(strings.TrimPrefix(k, prefix), runLogExt)
		if ok && !dir && backend.ValidateName("log part", part) == nil {
			parts = append(parts, part)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("log of run %s: %w", runID, err)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("log of run %s: %w", runID, backend.ErrNotFound)
	}
	// By part name, not by key: "a-b.log" sorts before "a.log", but "a" before "a-b".
	slices.Sort(parts)
	data := make([][]byte, len(parts))
	err = forEach(ctx, len(parts), func(ctx context.Context, i int) error {
		d, _, err := b.get(ctx, b.key(runsDir, runID, parts[i]+runLogExt))
		if errors.Is(err, errNoObject) {
			return nil
		}
		data[i] = d
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("log of run %s: %w", runID, err)
	}
	return bytes.Join(data, nil), nil
}
