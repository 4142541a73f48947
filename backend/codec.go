package backend

// How a Store encodes what it keeps, so that every driver holds the same bytes for
// the same record and numbers read back with the same Go types: releases, specs
// and workspaces as YAML, state entries as JSON, and names derived from content
// (spec hashes, state entry names).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

// validHash reports whether h looks like a hex sha256, the only names specs are
// stored under. Anything else is refused before it becomes a path or a key.
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

// entryName names the file or object of a state entry: resource IDs hold '/' and
// ':', so it is named by the hash of the ID (the ID itself is inside).
func entryName(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:]) + ".json"
}

// largeRecord is the size of JSON above which a record is kept in YAML's
// JSON form rather than block style. A YAML emitter holds the whole document
// several times over: writing a release of 50,000 resources in block style
// took 600 MB; as JSON it takes about its own size. Every YAML reader reads
// the JSON form the same (YAML is a superset of JSON).
const largeRecord = 1 << 20

// encodeYAML encodes a release, spec or workspace: as block-style YAML, or, for
// a large one, in YAML's JSON form (one resource per line or so, still
// readable).
func encodeYAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(j) > largeRecord {
		var b bytes.Buffer
		if err := json.Indent(&b, j, "", " "); err != nil {
			return nil, err
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	return yaml.JSONToYAML(j)
}

// RecordSize is how many bytes a Store writes for v as a release, spec or
// workspace (encodeYAML): what a benchmark compares the bytes written with.
func RecordSize(v any) (int, error) {
	data, err := encodeYAML(v)
	return len(data), err
}

// encodeJSON encodes a state entry.
func encodeJSON(v any) ([]byte, error) { return json.Marshal(v) }

// decodeYAML decodes YAML into v keeping numbers exact: free-form values
// (attributes, extensions, ...) get int64 for integral numbers and float64 for the
// rest (engine.Normalize), as Kubernetes unstructured objects need, instead of
// float64 for all.
func decodeYAML(data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return decodeJSON(data, v) // a large record (encodeYAML), read as the JSON it is
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return decodeJSON(j, v)
}

// decodeJSON is decodeYAML for JSON.
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
	case *StateEntry:
		normalizeResource(x.Resource)
	case *engine.Workspace:
		for name, m := range x.Modules {
			m.Config = normalizeMap(m.Config)
			x.Modules[name] = m
		}
		x.Context = normalizeMap(x.Context)
	case *drift.Report:
		for i := range x.Resources {
			normalizeFields(x.Resources[i].Fields)
			normalizeFields(x.Resources[i].Ignored)
		}
	}
	return nil
}

func normalizeFields(fs []drift.Field) {
	for i := range fs {
		fs[i].Recorded, fs[i].Live = engine.Normalize(fs[i].Recorded), engine.Normalize(fs[i].Live)
	}
}

func normalizeSpec(s *engine.Spec) {
	if s == nil {
		return
	}
	normalizeResources(s.Resources)
	s.SecretStore = engine.NormalizeDecoded(s.SecretStore)
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

// normalizeMap applies engine.Normalize to a map just decoded, in place
// (engine.NormalizeDecoded): json.Number values become int64 when integral,
// float64 otherwise.
func normalizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return engine.NormalizeDecoded(m).(map[string]any)
}
