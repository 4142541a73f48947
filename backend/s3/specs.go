package s3

import (
	"context"
	"errors"
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/internal/codec"
	"github.com/kumoproj/kumo/engine"
)

const specsDir = "specs"

func (b *Backend) specKey(hash string) string { return b.key(specsDir, hash+releaseExt) }

// PutSpec stores spec under its content hash. A spec already stored is not
// uploaded again; of concurrent first puts, one writes it (If-None-Match) and the
// others find it there.
func (b *Backend) PutSpec(ctx context.Context, spec *engine.Spec) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if spec == nil {
		return "", errors.New("put spec: spec is nil")
	}
	hash := engine.HashSpec(spec)
	key := b.specKey(hash)
	_, ok, err := b.head(ctx, key)
	if err != nil {
		return "", fmt.Errorf("put spec %s: %w", hash, err)
	}
	if ok {
		return hash, nil
	}
	data, err := codec.EncodeYAML(spec)
	if err != nil {
		return "", fmt.Errorf("put spec %s: encode: %w", hash, err)
	}
	var pe *preconditionError
	if _, err := b.put(ctx, key, data, condition{ifNoneMatch: true}); err != nil && !errors.As(err, &pe) {
		return "", fmt.Errorf("put spec %s: %w", hash, err)
	}
	return hash, nil
}

// GetSpec returns the spec stored under hash. An unknown or malformed hash gives an
// error wrapping backend.ErrNotFound.
func (b *Backend) GetSpec(ctx context.Context, hash string) (*engine.Spec, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := codec.CheckSpecHash(hash); err != nil {
		return nil, err
	}
	key := b.specKey(hash)
	data, _, err := b.get(ctx, key)
	if errors.Is(err, errNoObject) {
		return nil, fmt.Errorf("spec %s: %w", hash, backend.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("spec %s: %w", hash, err)
	}
	return codec.DecodeSpec(hash, b.where(key), data)
}
