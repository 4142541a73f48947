package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	yamlv2 "go.yaml.in/yaml/v2"
)

// MarshalSpec writes s as YAML. The output depends only on the content: map keys are
// sorted, resources keep their order, and each resource's fields come in the order
// id, type, attributes, dependsOn, extensions. Fields that are nil are left out, empty
// ones are written ({} or []), so input.ParseSpec reads the output back equal.
func MarshalSpec(s *Spec) ([]byte, error) {
	if s == nil {
		return nil, errors.New("marshal spec: nil spec")
	}
	resources := make([]any, len(s.Resources))
	for i := range s.Resources {
		r := &s.Resources[i]
		var m yamlv2.MapSlice
		m = append(m, yamlv2.MapItem{Key: "id", Value: r.ID}, yamlv2.MapItem{Key: "type", Value: string(r.Type)})
		if r.Attributes != nil {
			m = append(m, yamlv2.MapItem{Key: "attributes", Value: yamlTree(Normalize(r.Attributes))})
		}
		if r.DependsOn != nil {
			m = append(m, yamlv2.MapItem{Key: "dependsOn", Value: slices.Clone(r.DependsOn)})
		}
		if r.Extensions != nil {
			m = append(m, yamlv2.MapItem{Key: "extensions", Value: yamlTree(Normalize(r.Extensions))})
		}
		resources[i] = m
	}
	doc := yamlv2.MapSlice{{Key: "resources", Value: resources}}
	if s.SecretStore != nil {
		doc = append(doc, yamlv2.MapItem{Key: "secretStore", Value: yamlTree(Normalize(s.SecretStore))})
	}
	if s.Context != nil {
		doc = append(doc, yamlv2.MapItem{Key: "context", Value: yamlTree(Normalize(s.Context))})
	}
	if len(s.Hooks) > 0 {
		hooks := make([]any, len(s.Hooks))
		for i, h := range s.Hooks {
			m := yamlv2.MapSlice{{Key: "id", Value: h.ID}}
			events := make([]string, len(h.Events))
			for j, e := range h.Events {
				events[j] = string(e)
			}
			m = append(m, yamlv2.MapItem{Key: "events", Value: events})
			if h.Helm {
				m = append(m, yamlv2.MapItem{Key: "helm", Value: true})
			}
			if h.Weight != 0 {
				m = append(m, yamlv2.MapItem{Key: "weight", Value: h.Weight})
			}
			if len(h.DeletePolicies) > 0 {
				ps := make([]string, len(h.DeletePolicies))
				for j, p := range h.DeletePolicies {
					ps[j] = string(p)
				}
				m = append(m, yamlv2.MapItem{Key: "deletePolicies", Value: ps})
			}
			m = append(m, yamlv2.MapItem{Key: "attributes", Value: yamlTree(Normalize(h.Attributes))})
			hooks[i] = m
		}
		doc = append(doc, yamlv2.MapItem{Key: "hooks", Value: hooks})
	}
	if len(s.Moved) > 0 {
		moved := make([]any, len(s.Moved))
		for i, m := range s.Moved {
			moved[i] = yamlv2.MapSlice{{Key: "from", Value: m.From}, {Key: "to", Value: m.To}}
		}
		doc = append(doc, yamlv2.MapItem{Key: "moved", Value: moved})
	}
	out, err := yamlv2.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("marshal spec: %w", err)
	}
	return out, nil
}

// yamlTree turns a normalized tree into values yaml.v2 writes with sorted keys.
func yamlTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		m := make(yamlv2.MapSlice, len(keys))
		for i, k := range keys {
			m[i] = yamlv2.MapItem{Key: k, Value: yamlTree(x[k])}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = yamlTree(e)
		}
		return out
	}
	return v
}

// HashSpec identifies s by content: the lowercase hex SHA-256 of its canonical JSON
// encoding (every object's keys sorted, numbers normalized). Specs that differ only in
// key order or number spelling (1 vs 1.0) hash the same; resource order counts.
func HashSpec(s *Spec) string {
	if s != nil {
		// Normalize encodes a struct with encoding/json and goes on from the
		// text: canonicalJSON goes on from the same text, in one pass.
		if text, err := json.Marshal(*s); err == nil {
			if b, ok := canonicalJSON(text); ok {
				sum := sha256.Sum256(b)
				return hex.EncodeToString(sum[:])
			}
		}
	}
	return hashNormalized(s)
}

// hashNormalized is HashSpec the long way, the definition: s normalized
// into a tree, the tree encoded.
func hashNormalized(s *Spec) string {
	b, err := json.Marshal(Normalize(s))
	if err != nil {
		// Normalize yields only JSON-encodable values except for non-finite floats,
		// which no parsed spec contains; hash their printed form rather than fail.
		b = fmt.Appendf(nil, "%#v", Normalize(s))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
