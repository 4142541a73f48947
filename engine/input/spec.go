package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// ParseSpec reads a Spec from YAML or JSON. source names the input in errors (usually
// the file name). Errors give the line for malformed YAML and the resource and field
// for unknown or mistyped fields, e.g.
//
//	spec.yaml: resources[3] ("v1:ConfigMap:demo:x"): unknown field "dependson"
//
// Numbers in attributes, extensions, context and secretStore come out as int64 when
// integral and float64 otherwise (see engine.Normalize), as Kubernetes unstructured
// objects expect. An empty document is an error; "resources: []" is an empty Spec.
// ParseSpec does not validate the Spec (see engine.Spec.Validate), except that it
// refuses malformed Kusion secret-store references in Secret values and, in a spec
// with references, a secretStore kumo cannot read (engine.Spec.SecretStoreRefs).
func ParseSpec(data []byte, source string) (*engine.Spec, error) {
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
func parseSpecJSON(j []byte, source string) (*engine.Spec, error) {
	var top struct {
		Resources   []json.RawMessage `json:"resources"`
		SecretStore any               `json:"secretStore"`
		Context     map[string]any    `json:"context"`
		Hooks       []json.RawMessage `json:"hooks"`
		Moved       []json.RawMessage `json:"moved"`
	}
	if err := decodeStrict(j, &top, specFields); err != nil {
		return nil, fmt.Errorf("%s: %s", source, jsonErrorText(err))
	}
	s := &engine.Spec{
		Resources:   make([]engine.Resource, 0, len(top.Resources)),
		SecretStore: engine.NormalizeDecoded(top.SecretStore),
		Context:     normalizeMap(top.Context),
	}
	for i, raw := range top.Resources {
		var r engine.Resource
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
	for i, raw := range top.Hooks {
		var h engine.Hook
		if err := decodeStrict(raw, &h, hookFields); err != nil {
			return nil, fmt.Errorf("%s: hooks[%d]: %s", source, i, jsonErrorText(err))
		}
		h.Attributes = normalizeMap(h.Attributes)
		s.Hooks = append(s.Hooks, h)
	}
	for i, raw := range top.Moved {
		var m engine.Moved
		if err := decodeStrict(raw, &m, movedFields); err != nil {
			return nil, fmt.Errorf("%s: moved[%d]: %s", source, i, jsonErrorText(err))
		}
		s.Moved = append(s.Moved, m)
	}
	// A malformed secret-store reference is an error of the file, named where
	// the file is read; well-formed ones are resolved by the worker at apply.
	if errs := s.SecretStoreRefs(); len(errs) > 0 {
		for i, err := range errs {
			errs[i] = fmt.Errorf("%s: %w", source, err)
		}
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// The exact field names of a Spec and a Resource. encoding/json matches names without
// regard to case, so "dependson" would silently fill DependsOn; decodeStrict refuses it.
var (
	specFields     = []string{"resources", "secretStore", "context", "hooks", "moved"}
	resourceFields = []string{"id", "type", "attributes", "dependsOn", "extensions"}
	hookFields     = []string{"id", "events", "helm", "weight", "deletePolicies", "attributes"}
	movedFields    = []string{"from", "to"}
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

// normalizeMap normalizes a map just decoded, in place
// (engine.NormalizeDecoded): nothing else holds it, so it is not copied.
func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return engine.NormalizeDecoded(m).(map[string]any)
}
