package secretstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// Reader reads one secret: its whole value (a Vault secret's data as JSON,
// an AWS secret's string or binary) for a name and an optional version.
type Reader interface {
	Read(ctx context.Context, name, version string) (Secret, error)
}

// Secret is what a store holds under one name: Fields when it is a set of
// keys (a Vault secret, an AWS secret string holding a JSON object), Raw
// always.
type Secret struct {
	Raw    []byte
	Fields map[string]any
}

// ErrNotFound: the store has no such secret (or version).
var ErrNotFound = errors.New("not found")

// ErrRefused: the reference cannot be read as written, by this workspace or
// with the worker's credentials; unlike a store that does not answer, asking
// again cannot help.
var ErrRefused = errors.New("refused")

// Permanent reports whether err (from Resolve) is one no retry mends.
func Permanent(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrRefused)
}

// refused marks err as permanent (ErrRefused) without changing its text.
func refused(err error) error { return &refusedError{err} }

type refusedError struct{ err error }

func (e *refusedError) Error() string   { return e.err.Error() }
func (e *refusedError) Unwrap() []error { return []error{e.err, ErrRefused} }

// Env reads the worker's environment (os.Getenv in a worker).
type Env func(string) string

// Open returns a Reader for p (validated) with the credentials env gives.
func Open(ctx context.Context, p engine.SecretProvider, env Env) (Reader, error) {
	p = p.Normalized()
	switch {
	case p.Vault != nil:
		return newVault(*p.Vault, env)
	case p.AWS != nil:
		return newAWS(ctx, *p.AWS)
	}
	return nil, errors.New("the secret store names no provider")
}

// Resolve reads the values of refs (engine.SecretRefsOf of resource id) from
// store through r, each secret (name and version) once. A reference to a
// secret the workspace does not allow, a missing secret or property, or a
// store that cannot be read is an error naming the resource, the field, the
// reference and the store; values never appear in errors.
func Resolve(ctx context.Context, id string, refs []engine.SecretRefField, store *engine.WorkspaceSecretStore, r Reader) ([][]byte, error) {
	type key struct{ name, version string }
	read := map[key]Secret{}
	out := make([][]byte, len(refs))
	for i, f := range refs {
		fail := func(err error) error {
			return fmt.Errorf("%s: %s: %s (secret store %s): %w", id, f.Path(), f.Ref, store.Provider, err)
		}
		name, err := store.SecretName(f.Ref)
		if err != nil {
			return nil, fail(refused(err))
		}
		if !store.Allows(name) {
			return nil, fail(refused(fmt.Errorf("secret %q is not among the names this workspace's specs may read (secretStore.allowedNames)", name)))
		}
		k := key{f.Ref.Name, f.Ref.Version}
		s, ok := read[k]
		if !ok {
			if s, err = r.Read(ctx, f.Ref.Name, f.Ref.Version); err != nil {
				return nil, fail(err)
			}
			read[k] = s
		}
		if out[i], err = property(s, f.Ref.Property); err != nil {
			return nil, fail(refused(err))
		}
	}
	return out, nil
}

// property picks prop out of s as Kusion does: the whole secret when prop is
// empty; a key of that name; else a dotted path into nested objects and
// lists ("db.hosts.0"). Strings come out as they are, other values as JSON.
func property(s Secret, prop string) ([]byte, error) {
	if prop == "" {
		return s.Raw, nil
	}
	if s.Fields == nil {
		return nil, fmt.Errorf("the secret is not a JSON object, so it has no property %q", prop)
	}
	v, ok := s.Fields[prop]
	if !ok {
		var cur any = s.Fields
		for _, part := range strings.Split(prop, ".") {
			switch c := cur.(type) {
			case map[string]any:
				cur, ok = c[part]
			case []any:
				n, err := strconv.Atoi(part)
				ok = err == nil && n >= 0 && n < len(c)
				if ok {
					cur = c[n]
				}
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		v = cur
	}
	if !ok {
		return nil, fmt.Errorf("the secret has no property %q", prop)
	}
	switch t := v.(type) {
	case string:
		return []byte(t), nil
	case nil:
		return nil, nil
	case json.Number:
		return []byte(t.String()), nil
	default:
		return json.Marshal(t)
	}
}

// fieldsOf is raw's top-level object, nil when raw is not a JSON object.
func fieldsOf(raw []byte) map[string]any {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || dec.More() {
		return nil
	}
	return m
}
