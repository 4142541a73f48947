package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PutRunLog stores one part of a run's log, replacing an earlier write of the part.
func (s *Store) PutRunLog(ctx context.Context, runID, part string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRunLogPart(runID, part); err != nil {
		return err
	}
	if _, err := s.write(ctx, runLogKey(runID, part), data, Condition{}); err != nil {
		return fmt.Errorf("put run log of %s, part %s: %w", runID, part, err)
	}
	return nil
}

// RunLog returns a run's log parts concatenated in part-name order, or an error
// wrapping ErrNotFound when the run has none.
func (s *Store) RunLog(ctx context.Context, runID string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateName("run", runID); err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	ents, err := s.d.List(ctx, runDir(runID))
	if err != nil {
		return nil, fmt.Errorf("log of run %s: %w", runID, err)
	}
	var parts []string
	for _, e := range ents {
		part, ok := strings.CutSuffix(e.Name, logExt)
		if ok && !e.Dir && ValidateName("log part", part) == nil {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("log of run %s: %w", runID, ErrNotFound)
	}
	// By part name, not by key: "a-b.log" sorts before "a.log", but "a" before "a-b".
	slices.Sort(parts)
	data := make([][]byte, len(parts))
	err = forEach(ctx, len(parts), func(ctx context.Context, i int) error {
		d, _, err := s.d.Read(ctx, runLogKey(runID, parts[i]))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("part %s: %w", parts[i], err)
		}
		data[i] = d
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("log of run %s: %w", runID, err)
	}
	return bytes.Join(data, nil), nil
}
