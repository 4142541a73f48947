package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// validHash reports whether h looks like a hex sha256, the only file names under specs/.
func validHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// entryFileName names the file of a state entry: resource IDs hold '/' and ':', so
// the file is named by the hash of the ID (the ID itself is inside the file).
func entryFileName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:]) + ".json"
}

// versionOf is a release file's version: the hash of its bytes. Every write of a
// release changes ModifyTime, so two different copies never share a version.
func versionOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

func encodeYAML(v any) ([]byte, error) { return yaml.Marshal(v) }

// decodeYAML decodes YAML into v keeping numbers exact: free-form values
// (attributes, extensions, ...) get int64 for integral numbers and float64 for the
// rest (engine.Normalize), as Kubernetes unstructured objects need, instead of
// float64 for all.
func decodeYAML(data []byte, v any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return decodeJSON(j, v)
}

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	switch x := v.(type) {
	case *engine.Release:
		normalizeSpec(x.Spec)
		if x.State != nil {
			normalizeResources(x.State.Resources)
		}
	case *engine.Spec:
		normalizeSpec(x)
	case *backend.StateEntry:
		normalizeResource(x.Resource)
	case *engine.Workspace:
		for name, m := range x.Modules {
			m.Config = normalizeMap(m.Config)
			x.Modules[name] = m
		}
		x.Context = normalizeMap(x.Context)
	}
	return nil
}

func normalizeSpec(s *engine.Spec) {
	if s == nil {
		return
	}
	normalizeResources(s.Resources)
	s.SecretStore = engine.Normalize(s.SecretStore)
	s.Context = normalizeMap(s.Context)
}

func normalizeResources(rs []engine.Resource) {
	for i := range rs {
		normalizeResource(&rs[i])
	}
}

func normalizeResource(r *engine.Resource) {
	if r == nil {
		return
	}
	r.Attributes = normalizeMap(r.Attributes)
	r.Extensions = normalizeMap(r.Extensions)
}

// normalizeMap applies engine.Normalize: json.Number values become int64 when
// integral, float64 otherwise.
func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return engine.Normalize(m).(map[string]any)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
