package backend

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
)

// Sealer encrypts the sensitive values of the resources a Store keeps
// (Kubernetes Secret data, see engine.MapSensitive; every attribute of a
// Terraform resource and its terraform state, see mapSealed) into strings that
// stand where the values were; keyring.Ring is one.
type Sealer interface {
	Seal(plaintext []byte) (string, error)
	Open(sealed string) ([]byte, error)
}

// SetSealer makes s keep sensitive values encrypted: in release files, specs
// and state entries, so the backend holds ciphertext only. Records written
// without a sealer read as they are; sealed ones need the key that sealed them.
// Call it before s is used.
func (s *Store) SetSealer(k Sealer) { s.sealer = k }

// mapSealed is engine.MapSensitive for storage: a Terraform resource has every
// attribute sealed, not only those its provider marks sensitive, because a spec
// stored before its first apply cannot know which those are (the provider's
// schema is read by the runtime). Its terraform state is sealed whole.
func mapSealed(r engine.Resource, fn func(v any) (any, error)) (engine.Resource, error) {
	if r.Type != engine.Terraform {
		return engine.MapSensitive(r, fn)
	}
	attrs := make(map[string]any, len(r.Attributes))
	for k, v := range r.Attributes {
		if v == nil {
			attrs[k] = v
			continue
		}
		var err error
		if attrs[k], err = fn(v); err != nil {
			return r, err
		}
	}
	if r.Attributes != nil {
		r.Attributes = attrs
	}
	if st, ok := r.Extensions[engine.ExtTerraformState]; ok && st != nil {
		r.Extensions = maps.Clone(r.Extensions)
		var err error
		if r.Extensions[engine.ExtTerraformState], err = fn(st); err != nil {
			return r, err
		}
	}
	return r, nil
}

// sealResource returns r with its sensitive values sealed (r itself unchanged).
func (s *Store) sealResource(r engine.Resource) (engine.Resource, error) {
	if s.sealer == nil {
		return r, nil
	}
	return mapSealed(r, func(v any) (any, error) {
		if str, ok := v.(string); ok && keyring.IsSealed(str) {
			return v, nil // never seal twice
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return s.sealer.Seal(data)
	})
}

func (s *Store) sealResources(rs []engine.Resource) ([]engine.Resource, error) {
	if s.sealer == nil {
		return rs, nil
	}
	out := slices.Clone(rs)
	for i := range out {
		var err error
		if out[i], err = s.sealResource(out[i]); err != nil {
			return nil, fmt.Errorf("%s: encrypt sensitive values: %w", out[i].ID, err)
		}
	}
	return out, nil
}

// openResource decrypts the sealed values of r in place; where names the file
// or object read.
func (s *Store) openResource(r *engine.Resource, where string) error {
	if r == nil {
		return nil
	}
	opened, err := mapSealed(*r, func(v any) (any, error) {
		str, ok := v.(string)
		if !ok || !keyring.IsSealed(str) {
			return v, nil
		}
		if s.sealer == nil {
			id, _, _ := keyring.SplitSealed(str)
			return nil, fmt.Errorf("it holds values encrypted with codec key %s, and this kumo has no codec key (KUMO_CODEC_KEY_FILE, --codec-key-file)", id)
		}
		data, err := s.sealer.Open(str)
		if err != nil {
			return nil, err
		}
		var out any
		if err := decodeJSON(data, &out); err != nil {
			return nil, err
		}
		return engine.Normalize(out), nil
	})
	if err != nil {
		return fmt.Errorf("%s, resource %s: %w", where, r.ID, err)
	}
	*r = opened
	return nil
}

func (s *Store) openResources(rs []engine.Resource, where string) error {
	for i := range rs {
		if err := s.openResource(&rs[i], where); err != nil {
			return err
		}
	}
	return nil
}

// sealRelease returns a copy of r whose spec and state hold sealed values.
func (s *Store) sealRelease(r *engine.Release) (*engine.Release, error) {
	if s.sealer == nil || r == nil {
		return r, nil
	}
	c := *r
	if r.Spec != nil {
		spec, err := s.sealSpec(r.Spec)
		if err != nil {
			return nil, err
		}
		c.Spec = spec
	}
	if r.State != nil {
		rs, err := s.sealResources(r.State.Resources)
		if err != nil {
			return nil, err
		}
		c.State = &engine.State{Resources: rs}
	}
	return &c, nil
}

func (s *Store) sealSpec(spec *engine.Spec) (*engine.Spec, error) {
	if s.sealer == nil || spec == nil {
		return spec, nil
	}
	rs, err := s.sealResources(spec.Resources)
	if err != nil {
		return nil, err
	}
	c := *spec
	c.Resources = rs
	return &c, nil
}

func (s *Store) openRelease(r *engine.Release, where string) error {
	if r.Spec != nil {
		if err := s.openResources(r.Spec.Resources, where); err != nil {
			return err
		}
	}
	if r.State != nil {
		return s.openResources(r.State.Resources, where)
	}
	return nil
}
