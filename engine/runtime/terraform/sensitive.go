package terraform

import (
	"context"
	"slices"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/kumoproj/kumo/engine"
)

// The attributes a provider's schema marks sensitive (or that hold one marked
// sensitive, in a nested attribute or block, see sensitiveNames) are listed on every
// resource the runtime returns (engine.ExtSensitiveAttributes), so previews,
// logs and release files can mask and seal them. The schema is read once per
// provider version and resource type, with `terraform providers schema -json`
// in a directory that init prepared.

type sensitiveKey struct{ provider, version, typ string }

// loadSensitive sets s.sensitive from the runtime's cache, reading the schema
// if the cache lacks it. A schema that cannot be read fails the operation:
// kumo would not know which values to keep out of its records.
func (s *session) loadSensitive(ctx context.Context) error {
	key := sensitiveKey{s.spec.Provider.Source(), s.spec.Provider.Version, s.spec.Type}
	s.r.mu.Lock()
	names, ok := s.r.sensitive[key]
	s.r.mu.Unlock()
	if ok {
		s.sensitive = names
		return nil
	}
	var schemas *tfjson.ProviderSchemas
	if err := s.run(ctx, "providers schema", func(ctx context.Context) (err error) {
		schemas, err = s.tf.ProvidersSchema(ctx)
		return err
	}); err != nil {
		return err
	}
	names = []string{}
	for _, ps := range schemas.Schemas {
		if rs, ok := ps.ResourceSchemas[s.spec.Type]; ok {
			names = append(names, sensitiveNames(rs.Block)...)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	s.r.mu.Lock()
	s.r.sensitive[key] = names
	s.r.mu.Unlock()
	s.sensitive = names
	return nil
}

// sensitiveNames are the top-level attributes and blocks of b that are sensitive
// or hold something sensitive at any depth (a nested attribute's attribute, a
// nested block's attribute). kumo masks and seals whole top-level values, so a
// value that holds a sensitive one is masked whole: a password in a nested
// block is never shown, at the cost of its siblings being masked with it.
func sensitiveNames(b *tfjson.SchemaBlock) []string {
	if b == nil {
		return nil
	}
	var names []string
	for name, a := range b.Attributes {
		if attributeSensitive(a) {
			names = append(names, name)
		}
	}
	for name, nb := range b.NestedBlocks {
		if nb != nil && len(sensitiveNames(nb.Block)) > 0 {
			names = append(names, name)
		}
	}
	return names
}

// attributeSensitive reports whether a is sensitive or, as a nested attribute
// (protocol 6: a single, list, set or map of objects), holds one that is.
func attributeSensitive(a *tfjson.SchemaAttribute) bool {
	if a == nil {
		return false
	}
	if a.Sensitive {
		return true
	}
	if n := a.AttributeNestedType; n != nil {
		for _, na := range n.Attributes {
			if attributeSensitive(na) {
				return true
			}
		}
	}
	return false
}

// markSensitive lists s.sensitive on res, a resource the session returns.
func (s *session) markSensitive(ext map[string]any) {
	if len(s.sensitive) == 0 {
		delete(ext, engine.ExtSensitiveAttributes)
		return
	}
	l := make([]any, len(s.sensitive))
	for i, n := range s.sensitive {
		l[i] = n
	}
	ext[engine.ExtSensitiveAttributes] = l
}
