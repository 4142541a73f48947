package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Sensitive values are those a Kubernetes Secret holds (data, stringData, and
// the last-applied-configuration annotation kubectl leaves, which repeats them)
// and the Terraform attributes a provider marks sensitive (the runtime lists
// them in ExtSensitiveAttributes; the terraform state beside them holds them
// too). Previews, diffs, logs, run show and release show print Masked instead;
// the backend keeps them encrypted.

// Masked is what is printed instead of a sensitive value.
const Masked = "(sensitive)"

// ExtSensitiveAttributes lists, on a Terraform resource a runtime returned, the
// top-level attributes its provider marks sensitive, or that hold, at any depth
// (a nested attribute or block), a value it marks sensitive: those are masked whole.
const ExtSensitiveAttributes = "kumoproj.io/sensitive-attributes"

// lastApplied is kubectl's copy of what it applied: for a Secret, its data.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// IsSecret reports whether r is a Kubernetes Secret.
func IsSecret(r *Resource) bool {
	if r == nil || r.Type != Kubernetes {
		return false
	}
	return r.Attributes["apiVersion"] == "v1" && r.Attributes["kind"] == "Secret"
}

// SensitiveAttributes are the Terraform attributes of r its provider marks
// sensitive, as the runtime recorded them.
func SensitiveAttributes(r *Resource) []string {
	if r == nil || r.Type != Terraform {
		return nil
	}
	var out []string
	switch l := r.Extensions[ExtSensitiveAttributes].(type) {
	case []string:
		out = l
	case []any:
		for _, v := range l {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// HasSensitive reports whether r holds any sensitive value.
func HasSensitive(r *Resource) bool {
	return IsSecret(r) || len(SensitiveAttributes(r)) > 0
}

// MapSensitive returns r with each sensitive value v replaced by fn(v), sharing
// everything else with r (which it never changes). The first error of fn stops
// it. A resource without sensitive values is returned as it is.
func MapSensitive(r Resource, fn func(v any) (any, error)) (Resource, error) {
	return MapSensitiveAt(r, func(_ string, v any) (any, error) { return fn(v) })
}

// MapSensitiveAt is MapSensitive telling fn where each value is: a JSON pointer
// into the attributes ("/data/password"), or FieldTerraformState for the
// terraform state extension.
func MapSensitiveAt(r Resource, fn func(field string, v any) (any, error)) (Resource, error) {
	if !HasSensitive(&r) {
		return r, nil
	}
	r.Attributes = maps.Clone(r.Attributes)
	if IsSecret(&r) {
		for _, field := range []string{"data", "stringData"} {
			m, ok := r.Attributes[field].(map[string]any)
			if !ok {
				continue
			}
			m = maps.Clone(m)
			for k, v := range m {
				var err error
				if m[k], err = fn(Pointer(field, k), v); err != nil {
					return r, err
				}
			}
			r.Attributes[field] = m
		}
		if meta, ok := r.Attributes["metadata"].(map[string]any); ok {
			if ann, ok := meta["annotations"].(map[string]any); ok && ann[lastApplied] != nil {
				meta, ann = maps.Clone(meta), maps.Clone(ann)
				var err error
				if ann[lastApplied], err = fn(Pointer("metadata", "annotations", lastApplied), ann[lastApplied]); err != nil {
					return r, err
				}
				meta["annotations"] = ann
				r.Attributes["metadata"] = meta
			}
		}
		return r, nil
	}
	for _, name := range SensitiveAttributes(&r) {
		if v, ok := r.Attributes[name]; ok && v != nil {
			var err error
			if r.Attributes[name], err = fn(Pointer(name), v); err != nil {
				return r, err
			}
		}
	}
	// Terraform's state holds every attribute, the sensitive ones included.
	if st, ok := r.Extensions[ExtTerraformState]; ok && st != nil {
		r.Extensions = maps.Clone(r.Extensions)
		var err error
		if r.Extensions[ExtTerraformState], err = fn(FieldTerraformState, st); err != nil {
			return r, err
		}
	}
	return r, nil
}

// FieldTerraformState names, for MapSensitiveAt, a Terraform resource's state
// extension (not an attribute, so not a JSON pointer).
const FieldTerraformState = "extensions." + ExtTerraformState

// Pointer is the JSON pointer (RFC 6901) of the attribute at keys.
func Pointer(keys ...string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// MaskSensitive returns r with every sensitive value shown as Masked.
func MaskSensitive(r Resource) Resource {
	out, _ := MapSensitive(r, func(any) (any, error) { return Masked, nil })
	return out
}

// MaskResources is MaskSensitive over a list, which it does not change.
func MaskResources(rs []Resource) []Resource {
	out := slices.Clone(rs)
	for i := range out {
		out[i] = MaskSensitive(out[i])
	}
	return out
}

// fingerprintPrefix marks, inside a diff, a sensitive value replaced by its
// fingerprint: diffs compare fingerprints, so a changed value is still a
// change, and print Masked (see maskFields).
const fingerprintPrefix = "\x00kumo-sensitive:"

// fingerprinted returns views of one resource (planned, live, prior; or two
// revisions) with each sensitive value replaced by a fingerprint of it, salted
// with the resource's ID. A Terraform attribute sensitive in any view is
// sensitive in all: the spec's view does not say which are.
func fingerprinted(rs ...*Resource) []*Resource {
	var names []string
	for _, r := range rs {
		for _, n := range SensitiveAttributes(r) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	out := make([]*Resource, len(rs))
	for i, r := range rs {
		if r != nil && r.Type == Terraform && len(names) > 0 {
			c := *r
			c.Extensions = maps.Clone(c.Extensions)
			if c.Extensions == nil {
				c.Extensions = map[string]any{}
			}
			c.Extensions[ExtSensitiveAttributes] = names
			r = &c
		}
		out[i] = withFingerprint(r)
	}
	return out
}

func withFingerprint(r *Resource) *Resource {
	if r == nil || !HasSensitive(r) {
		return r
	}
	out, _ := MapSensitive(*r, func(v any) (any, error) {
		data, _ := json.Marshal(Normalize(v))
		sum := sha256.Sum256(append([]byte("kumo sensitive value\x00"+r.ID+"\x00"), data...))
		return fingerprintPrefix + hex.EncodeToString(sum[:]), nil
	})
	return &out
}

// maskFields shows fingerprinted values as Masked. The field keeps a
// fingerprint of the change (Sensitive), so two plans that change a sensitive
// value differently have different digests, while neither shows the value.
func maskFields(fields []FieldChange) {
	for i := range fields {
		f := &fields[i]
		b, bOK := f.Before.(string)
		a, aOK := f.After.(string)
		bOK = bOK && strings.HasPrefix(b, fingerprintPrefix)
		aOK = aOK && strings.HasPrefix(a, fingerprintPrefix)
		if !bOK && !aOK {
			continue
		}
		sum := sha256.Sum256([]byte(b + "\x00" + a))
		f.Sensitive = "sha256:" + hex.EncodeToString(sum[:8])
		if bOK {
			f.Before = Masked
		}
		if aOK {
			f.After = Masked
		}
	}
}

// SensitivePointers are the JSON pointers under which r's attributes hold
// sensitive values: a field at or below one of them is sensitive.
func SensitivePointers(r *Resource) []string {
	if IsSecret(r) {
		return []string{"/data", "/stringData", "/metadata/annotations/" + strings.ReplaceAll(lastApplied, "/", "~1")}
	}
	var out []string
	for _, name := range SensitiveAttributes(r) {
		out = append(out, "/"+strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
	}
	return out
}

// ReleaseSpec is r's spec with its Terraform resources marked with the
// sensitive attributes r's state records for them: a spec does not say which
// attributes a provider marks sensitive, the runtime's results do. Masking or
// diffing the result hides them too. r is not changed; nil when r has no spec.
func ReleaseSpec(r *Release) *Spec {
	if r == nil || r.Spec == nil {
		return nil
	}
	spec := *r.Spec
	if r.State == nil {
		return &spec
	}
	names := map[string][]string{}
	for i := range r.State.Resources {
		if n := SensitiveAttributes(&r.State.Resources[i]); len(n) > 0 {
			names[r.State.Resources[i].ID] = n
		}
	}
	spec.Resources = slices.Clone(spec.Resources)
	for i, res := range spec.Resources {
		if n, ok := names[res.ID]; ok && res.Type == Terraform && len(SensitiveAttributes(&res)) == 0 {
			res.Extensions = maps.Clone(res.Extensions)
			if res.Extensions == nil {
				res.Extensions = map[string]any{}
			}
			res.Extensions[ExtSensitiveAttributes] = n
			spec.Resources[i] = res
		}
	}
	return &spec
}
