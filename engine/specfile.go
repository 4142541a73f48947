package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

// ParseSpec reads a Spec from YAML or JSON. source names the input in errors (usually
// the file name). Errors give the line for malformed YAML and the resource and field
// for unknown or mistyped fields, e.g.
//
//	spec.yaml: resources[3] ("v1:ConfigMap:demo:x"): unknown field "dependson"
//
// Numbers in attributes, extensions, context and secretStore come out as int64 when
// integral and float64 otherwise (see Normalize), as Kubernetes unstructured objects
// expect. An empty document is an error; "resources: []" is an empty Spec. ParseSpec
// does not validate the Spec: see Spec.Validate.
func ParseSpec(data []byte, source string) (*Spec, error) {
	docs, err := splitDocuments(data, source)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, fmt.Errorf("%s: empty document, want a spec with resources", source)
	case 1:
		var top any
		if err := decodeJSON(docs[0].json, &top, false); err == nil {
			if err := docs[0].checkValues(top); err != nil {
				return nil, err
			}
		}
		return parseSpecJSON(docs[0].json, source)
	}
	// Reading the first document only would drop the others without a word.
	return nil, fmt.Errorf("%s: %d documents (the second at line %d); a Spec is one document", source, len(docs), docs[1].line)
}

// parseSpecJSON is ParseSpec on one document, as JSON.
func parseSpecJSON(j []byte, source string) (*Spec, error) {
	var top struct {
		Resources   []json.RawMessage `json:"resources"`
		SecretStore any               `json:"secretStore"`
		Context     map[string]any    `json:"context"`
	}
	if err := decodeStrict(j, &top, specFields); err != nil {
		return nil, fmt.Errorf("%s: %s", source, jsonErrorText(err))
	}
	s := &Spec{
		Resources:   make([]Resource, 0, len(top.Resources)),
		SecretStore: Normalize(top.SecretStore),
		Context:     normalizeMap(top.Context),
	}
	for i, raw := range top.Resources {
		var r Resource
		if err := decodeStrict(raw, &r, resourceFields); err != nil {
			where := fmt.Sprintf("resources[%d]", i)
			var head map[string]any
			if json.Unmarshal(raw, &head) == nil {
				if id, ok := head["id"].(string); ok && id != "" {
					where += fmt.Sprintf(" (%q)", id)
				}
			}
			return nil, fmt.Errorf("%s: %s: %s", source, where, jsonErrorText(err))
		}
		r.Attributes = normalizeMap(r.Attributes)
		r.Extensions = normalizeMap(r.Extensions)
		s.Resources = append(s.Resources, r)
	}
	return s, nil
}

// The exact field names of a Spec and a Resource. encoding/json matches names without
// regard to case, so "dependson" would silently fill DependsOn; decodeStrict refuses it.
var (
	specFields     = []string{"resources", "secretStore", "context"}
	resourceFields = []string{"id", "type", "attributes", "dependsOn", "extensions"}
)

// decodeStrict decodes a JSON object into v, refusing fields not spelled exactly as
// one of fields.
func decodeStrict(data []byte, v any, fields []string) error {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) == nil { // not an object: let decodeJSON say why
		var unknown []string
		for k := range keys {
			if !slices.Contains(fields, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fmt.Errorf("unknown field %q", unknown[0])
		}
	}
	return decodeJSON(data, v, true)
}

// decodeJSON decodes exactly one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the top-level value")
	}
	return nil
}

// jsonErrorText turns encoding/json's messages into ones about the spec's fields.
func jsonErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return fmt.Sprintf("cannot use %s as %s", te.Value, jsonTypeName(te.Type.String()))
		}
		return fmt.Sprintf("field %q: cannot use %s as %s", field, te.Value, jsonTypeName(te.Type.String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonTypeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"), strings.HasPrefix(goType, "engine."):
		return "object"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	}
	return goType
}

func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return Normalize(m).(map[string]any)
}

// MarshalSpec writes s as YAML. The output depends only on the content: map keys are
// sorted, resources keep their order, and each resource's fields come in the order
// id, type, attributes, dependsOn, extensions. Fields that are nil are left out, empty
// ones are written ({} or []), so ParseSpec reads the output back equal.
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
	b, err := json.Marshal(Normalize(s))
	if err != nil {
		// Normalize yields only JSON-encodable values except for non-finite floats,
		// which no parsed spec contains; hash their printed form rather than fail.
		b = fmt.Appendf(nil, "%#v", Normalize(s))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
