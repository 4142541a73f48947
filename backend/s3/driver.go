package s3

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kumoproj/kumo/backend"
)

// objectKey is key under the prefix.
func (b *Driver) objectKey(key string) string { return b.prefix + key }

// Where is the URL of key's object.
func (b *Driver) Where(key string) string { return b.where(b.objectKey(key)) }

// Read returns an object's bytes and its ETag as the version.
func (b *Driver) Read(ctx context.Context, key string) ([]byte, string, error) {
	return b.get(ctx, b.objectKey(key))
}

// Exists asks with a HEAD request.
func (b *Driver) Exists(ctx context.Context, key string) (bool, error) {
	_, ok, err := b.head(ctx, b.objectKey(key))
	return ok, err
}

// Write is one PUT: If-None-Match: * for CreateOnly, If-Match for IfVersion.
func (b *Driver) Write(ctx context.Context, key string, data []byte, cond backend.Condition) (string, error) {
	objKey := b.objectKey(key)
	etag, err := b.put(ctx, objKey, data, condition{ifNoneMatch: cond.CreateOnly, ifMatch: cond.IfVersion})
	var pe *preconditionError
	switch {
	case !errors.As(err, &pe):
		return etag, err
	case cond.CreateOnly:
		return "", fmt.Errorf("%s: %w", b.where(objKey), backend.ErrExists)
	case !pe.exists:
		return "", fmt.Errorf("%s: %w", b.where(objKey), backend.ErrNotFound)
	default:
		return "", fmt.Errorf("%w: %s is version %s", backend.ErrConflict, b.where(objKey), pe.etag)
	}
}

// List lists with the delimiter '/': objects and common prefixes directly under dir.
func (b *Driver) List(ctx context.Context, dir string) ([]backend.Entry, error) {
	prefix := b.objectKey(dir) + "/"
	var out []backend.Entry
	err := b.list(ctx, prefix, "/", func(k string, isDir bool) error {
		out = append(out, backend.Entry{Name: strings.TrimSuffix(strings.TrimPrefix(k, prefix), "/"), Dir: isDir})
		return nil
	})
	return out, err
}

// Delete looks first: S3 deletes a missing key without complaint.
func (b *Driver) Delete(ctx context.Context, key string) error {
	objKey := b.objectKey(key)
	_, ok, err := b.head(ctx, objKey)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: %w", b.where(objKey), backend.ErrNotFound)
	}
	return b.deleteKeys(ctx, []string{objKey})
}

// DeleteAll deletes whatever it lists under dir, so a deletion interrupted half-way
// is finished by the next one.
func (b *Driver) DeleteAll(ctx context.Context, dir string) error {
	var keys []string
	err := b.list(ctx, b.objectKey(dir)+"/", "", func(k string, _ bool) error {
		keys = append(keys, k)
		return nil
	})
	if err != nil {
		return err
	}
	return b.deleteKeys(ctx, keys)
}
