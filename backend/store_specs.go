package backend

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// PutSpec stores spec under its content hash. A spec already stored is not written
// again; of concurrent first puts, one writes it (create-only) and the others find
// it there.
func (s *Store) PutSpec(ctx context.Context, spec *engine.Spec) (string, error) {
	hash, _, err := s.putSpec(ctx, spec)
	return hash, err
}

// putSpec is PutSpec; found says the spec was there already, written by
// someone else (so a garbage collection may be removing it: see reused).
func (s *Store) putSpec(ctx context.Context, spec *engine.Spec) (hash string, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if spec == nil {
		return "", false, errors.New("put spec: spec is nil")
	}
	hash = engine.HashSpec(spec)
	key := specKey(hash)
	ok, err := s.d.Exists(ctx, key)
	if err != nil {
		return "", false, fmt.Errorf("put spec %s: %w", hash, err)
	}
	if ok {
		return hash, true, nil
	}
	sealed, err := s.sealSpec(spec, specScope(hash))
	if err != nil {
		return "", false, fmt.Errorf("put spec %s: %w", hash, err)
	}
	data, err := encodeCompressed(sealed)
	if err != nil {
		return "", false, fmt.Errorf("put spec %s: encode: %w", hash, err)
	}
	_, err = s.write(ctx, key, data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		return hash, true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("put spec %s: %w", hash, err)
	}
	return hash, false, nil
}

// GetSpec returns the spec stored under hash. An unknown or malformed hash gives an
// error wrapping ErrNotFound.
func (s *Store) GetSpec(ctx context.Context, hash string) (*engine.Spec, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkSpecHash(hash); err != nil {
		return nil, err
	}
	key := specKey(hash)
	data, err := s.readNamed(ctx, key, "spec "+hash)
	if err != nil {
		return nil, err
	}
	spec, err := decodeSpec(hash, s.d.Where(key), data)
	if err != nil {
		return nil, err
	}
	if err := s.openResources(spec.Resources, s.d.Where(key), specScope(hash)); err != nil {
		return nil, fmt.Errorf("spec %s: %w", hash, err)
	}
	if err := s.openHooks(spec.Hooks, s.d.Where(key), specScope(hash)); err != nil {
		return nil, fmt.Errorf("spec %s: %w", hash, err)
	}
	return spec, nil
}
