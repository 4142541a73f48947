package terraform

import (
	"context"
	"slices"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/kumoproj/kumo/engine"
)

// The attributes a provider's schema marks sensitive are listed on every
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
		rs, ok := ps.ResourceSchemas[s.spec.Type]
		if !ok || rs.Block == nil {
			continue
		}
		for name, a := range rs.Block.Attributes {
			if a.Sensitive {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	s.r.mu.Lock()
	s.r.sensitive[key] = names
	s.r.mu.Unlock()
	s.sensitive = names
	return nil
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
