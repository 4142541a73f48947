package client

import (
	"context"
	"fmt"

	"github.com/kumoproj/kumo/backend"
)

// MigrateBackend copies every record from the backend from names to the one
// to names (of project only, when set): byte for byte, so records stay sealed
// and encoded as they were, verified by reading each back and comparing
// hashes. It refuses while a run holds a stack in from, and when to holds a
// different record under the same key (see backend.Copy). Both are opened as
// OpenBackend opens them, without codec keys: nothing is decoded.
func MigrateBackend(ctx context.Context, from, to Options, project string) (backend.CopyReport, error) {
	if from.Backend == "" || to.Backend == "" {
		return backend.CopyReport{}, fmt.Errorf("backend migrate: both --from and --to must name a backend (file:///dir for a local directory)")
	}
	src, err := recordStore(ctx, from)
	if err != nil {
		return backend.CopyReport{}, fmt.Errorf("backend migrate: --from: %w", err)
	}
	dst, err := recordStore(ctx, to)
	if err != nil {
		return backend.CopyReport{}, fmt.Errorf("backend migrate: --to: %w", err)
	}
	if src == dst {
		return backend.CopyReport{}, fmt.Errorf("backend migrate: --from and --to are the same backend")
	}
	rep, err := backend.Copy(ctx, src, dst, backend.CopyOptions{Project: project})
	if err != nil {
		return rep, fmt.Errorf("backend migrate: %w", err)
	}
	return rep, nil
}

func recordStore(ctx context.Context, opts Options) (*backend.Store, error) {
	b, err := openDriverBackend(ctx, opts)
	if err != nil {
		return nil, err
	}
	rs, ok := b.(interface{ RecordStore() *backend.Store })
	if !ok {
		return nil, fmt.Errorf("backend %s cannot be copied record by record", opts.Backend)
	}
	return rs.RecordStore(), nil
}
