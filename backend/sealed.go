package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
)

// Sealer encrypts the sensitive values of the resources a Store keeps
// (Kubernetes Secret data, see engine.MapSensitive; every attribute of a
// Terraform resource and its terraform state, see mapSealed) into strings that
// stand where the values were; keyring.Ring is one. Each value is bound by its
// associated data (keyring.AAD) to where it is stored: project, workspace,
// resource ID and field (see sealScope). A Sealer is called from several
// goroutines at once: a state's resources are encoded side by side.
type Sealer interface {
	Seal(plaintext, aad []byte) (string, error)
	Open(sealed string, aad []byte) ([]byte, error)
	// OpenLegacy opens a value sealed before values were bound to their
	// place. The store uses it only for its own records, which it then
	// reseals bound on their next write.
	OpenLegacy(sealed string) ([]byte, error)
}

// SetSealer makes s keep sensitive values encrypted: in release files, specs
// and state entries, so the backend holds ciphertext only. Records written
// without a sealer read as they are; sealed ones need the key that sealed them.
// Call it before s is used.
func (s *Store) SetSealer(k Sealer) { s.sealer = k }

// sealScope is where a record lives, the first parts of the associated data of
// its sealed values (the resource ID and field follow): a release and its state
// entries are ("release", project, workspace); a spec, stored by the hash of its
// clear content and shared by whoever stores the same content, is ("spec",
// hash).
type sealScope []string

func releaseScope(project, workspace string) sealScope {
	return sealScope{"release", project, workspace}
}

func specScope(hash string) sealScope { return sealScope{"spec", hash} }

func (sc sealScope) aad(id, field string) []byte {
	return keyring.AAD(append(slices.Clone(sc), id, field)...)
}

// mapSealed is engine.MapSensitiveAt for storage: a Terraform resource has
// every attribute sealed, not only those its provider marks sensitive, because
// a spec stored before its first apply cannot know which those are (the
// provider's schema is read by the runtime). Its terraform state is sealed
// whole.
func mapSealed(r engine.Resource, fn func(field string, v any) (any, error)) (engine.Resource, error) {
	if r.Type != engine.Terraform {
		return engine.MapSensitiveAt(r, fn)
	}
	attrs := make(map[string]any, len(r.Attributes))
	for k, v := range r.Attributes {
		if v == nil {
			attrs[k] = v
			continue
		}
		var err error
		if attrs[k], err = fn(engine.Pointer(k), v); err != nil {
			return r, err
		}
	}
	if r.Attributes != nil {
		r.Attributes = attrs
	}
	if st, ok := r.Extensions[engine.ExtTerraformState]; ok && st != nil {
		r.Extensions = maps.Clone(r.Extensions)
		var err error
		if r.Extensions[engine.ExtTerraformState], err = fn(engine.FieldTerraformState, st); err != nil {
			return r, err
		}
	}
	return r, nil
}

// sealResource returns r with its sensitive values sealed for sc (r itself
// unchanged). A value that is already sealed is refused: values the store
// reads are opened, so a sealed one here came from input (a spec, a runtime's
// result) and was sealed for somewhere else; keeping it as it is would let the
// store open it here.
func (s *Store) sealResource(r engine.Resource, sc sealScope) (engine.Resource, error) {
	if s.sealer == nil {
		return r, nil
	}
	return mapSealed(r, func(field string, v any) (any, error) {
		if str, ok := v.(string); ok && keyring.IsSealed(str) {
			return nil, fmt.Errorf("field %s: %w", field, engine.ErrSealedCopied)
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return s.sealer.Seal(data, sc.aad(r.ID, field))
	})
}

func (s *Store) sealResources(rs []engine.Resource, sc sealScope) ([]engine.Resource, error) {
	if s.sealer == nil {
		return rs, nil
	}
	out := slices.Clone(rs)
	for i := range out {
		var err error
		if out[i], err = s.sealResource(out[i], sc); err != nil {
			return nil, fmt.Errorf("%s: encrypt sensitive values: %w", out[i].ID, err)
		}
	}
	return out, nil
}

// hasSensitive says whether r holds values a sealer seals.
func hasSensitive(r engine.Resource) bool {
	found := false
	_, _ = mapSealed(r, func(_ string, v any) (any, error) {
		found = true
		return v, nil
	})
	return found
}

// openResource decrypts the sealed values of r (stored for sc) in place; where
// names the file or object read. A value sealed before values were bound to
// their place opens as such (it is resealed bound when the record is next
// written); one sealed for another place does not open, and the error names
// the resource and field.
func (s *Store) openResource(r *engine.Resource, where string, sc sealScope) error {
	if r == nil {
		return nil
	}
	opened, err := mapSealed(*r, func(field string, v any) (any, error) {
		str, ok := v.(string)
		if !ok || !keyring.IsSealed(str) {
			return v, nil
		}
		id, _, _ := keyring.SplitSealed(str)
		if s.sealer == nil {
			return nil, fmt.Errorf("it holds values encrypted with codec key %s, and this kumo has no codec key (KUMO_CODEC_KEY_FILE, --codec-key-file)", id)
		}
		data, err := s.sealer.Open(str, sc.aad(r.ID, field))
		var unknown *keyring.UnknownKeyError
		if errors.As(err, &unknown) {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		if err != nil {
			if data, err = s.sealer.OpenLegacy(str); err != nil {
				return nil, fmt.Errorf("field %s: the value sealed with key %s does not open here: it was sealed for another project, workspace, resource or field (%s), or altered", field, id, engine.ErrSealedCopied)
			}
		}
		var out any
		if err := decodeJSON(data, &out); err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		return engine.Normalize(out), nil
	})
	if err != nil {
		return fmt.Errorf("%s, resource %s: %w", where, r.ID, err)
	}
	*r = opened
	return nil
}

func (s *Store) openResources(rs []engine.Resource, where string, sc sealScope) error {
	for i := range rs {
		if err := s.openResource(&rs[i], where, sc); err != nil {
			return err
		}
	}
	return nil
}

// sealSpec returns a copy of spec whose resources hold values sealed for sc.
func (s *Store) sealSpec(spec *engine.Spec, sc sealScope) (*engine.Spec, error) {
	if s.sealer == nil || spec == nil {
		return spec, nil
	}
	rs, err := s.sealResources(spec.Resources, sc)
	if err != nil {
		return nil, err
	}
	c := *spec
	c.Resources = rs
	if len(spec.Hooks) > 0 {
		hs, err := s.sealResources(hookResources(spec.Hooks), sc)
		if err != nil {
			return nil, fmt.Errorf("hook %w", err)
		}
		c.Hooks = slices.Clone(spec.Hooks)
		for i := range c.Hooks {
			c.Hooks[i].Attributes = hs[i].Attributes
		}
	}
	return &c, nil
}

// hookResources views hooks as the Kubernetes resources they create, so a
// hook Secret's data is sealed and opened as a resource's is.
func hookResources(hs []engine.Hook) []engine.Resource {
	out := make([]engine.Resource, len(hs))
	for i, h := range hs {
		out[i] = engine.Resource{ID: "hook " + h.ID, Type: engine.Kubernetes, Attributes: h.Attributes}
	}
	return out
}

// openHooks opens the sealed values of hooks in place.
func (s *Store) openHooks(hs []engine.Hook, where string, sc sealScope) error {
	if len(hs) == 0 {
		return nil
	}
	rs := hookResources(hs)
	if err := s.openResources(rs, where, sc); err != nil {
		return err
	}
	for i := range hs {
		hs[i].Attributes = rs[i].Attributes
	}
	return nil
}

func (s *Store) openRelease(r *engine.Release, where string) error {
	sc := releaseScope(r.Project, r.Workspace)
	if r.Spec != nil {
		if err := s.openResources(r.Spec.Resources, where, sc); err != nil {
			return err
		}
		if err := s.openHooks(r.Spec.Hooks, where, sc); err != nil {
			return err
		}
	}
	if r.State != nil {
		return s.openResources(r.State.Resources, where, sc)
	}
	return nil
}

// textScope binds a sealed text to its project, workspace and what it is.
func textScope(project, workspace, what string) []byte {
	return keyring.AAD("text", what, project, workspace)
}

// SealText implements Backend.
func (s *Store) SealText(project, workspace, what, text string) (string, error) {
	if s.sealer == nil {
		return "", nil
	}
	return s.sealer.Seal([]byte(text), textScope(project, workspace, what))
}

// OpenText implements Backend.
func (s *Store) OpenText(project, workspace, what, sealed string) (string, error) {
	if s.sealer == nil {
		return "", fmt.Errorf("the %s of %s/%s is sealed, and this kumo has no codec key to open it", what, project, workspace)
	}
	text, err := s.sealer.Open(sealed, textScope(project, workspace, what))
	if err != nil {
		return "", fmt.Errorf("the %s of %s/%s does not open here: %w", what, project, workspace, err)
	}
	return string(text), nil
}
