package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/internal/tree"
)

// RefPrefix starts an attribute string that refers to another resource's live
// attribute: "$kumo_path.<resourceID>.<dotted.path>".
const RefPrefix = "$kumo_path."

// KusionRefPrefix is Kusion's spelling of RefPrefix: a Spec written by Kusion refers
// to other resources as "$kusion_path.<resourceID>.<dotted.path>", and means the same.
const KusionRefPrefix = "$kusion_path."

// refPrefixes are the prefixes that make an attribute string a reference.
var refPrefixes = [...]string{RefPrefix, KusionRefPrefix}

// refPrefix returns the reference prefix s starts with, or "".
func refPrefix(s string) string {
	for _, p := range refPrefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// Ref is one reference ($kumo_path or $kusion_path) found in a resource's attributes.
type Ref struct {
	// Raw is the attribute string as written, e.g.
	// "$kumo_path.v1:Service:demo:web.spec.clusterIP".
	Raw string
	// ResourceID is the resource referred to ("v1:Service:demo:web").
	ResourceID string
	// Path is the attribute path in that resource (["spec", "clusterIP"]); a numeric
	// segment indexes a list.
	Path []string
}

// IsRef reports whether the attribute value v is a reference: a string starting
// with $kumo_path. or $kusion_path.
func IsRef(v any) bool {
	s, ok := v.(string)
	return ok && refPrefix(s) != ""
}

// Refs returns the distinct $kumo_path and $kusion_path references in r's attributes (walked deeply,
// lists included), in a stable order. IDs may contain dots, so the resource is the
// longest dot-separated prefix that is an ID in s. A reference naming no resource of s,
// or naming one without an attribute path, is an error.
func (s *Spec) Refs(r *Resource) ([]Ref, error) {
	return refsOf(r, s.idSet())
}

// AllRefs returns what Refs returns for every resource of s, by index, with
// the IDs gathered once: Refs of each resource in turn would gather them
// each time, which over a spec of 50,000 resources takes minutes.
func (s *Spec) AllRefs() ([][]Ref, []error) {
	ids := s.idSet()
	refs, errs := make([][]Ref, len(s.Resources)), make([]error, len(s.Resources))
	for i := range s.Resources {
		refs[i], errs[i] = refsOf(&s.Resources[i], ids)
	}
	return refs, errs
}

// idSet is the set of resource IDs of s. Build it once when looking at many
// resources: per resource it would make a whole-spec pass quadratic.
func (s *Spec) idSet() map[string]bool {
	ids := make(map[string]bool, len(s.Resources))
	for i := range s.Resources {
		ids[s.Resources[i].ID] = true
	}
	return ids
}

func refsOf(r *Resource, ids map[string]bool) ([]Ref, error) {
	var refs []Ref
	var errs []error
	seen := map[string]bool{}
	walkStrings(r.Attributes, func(str string) {
		if refPrefix(str) == "" || seen[str] {
			return
		}
		seen[str] = true
		ref, err := parseRef(str, ids)
		if err != nil {
			errs = append(errs, err)
			return
		}
		refs = append(refs, ref)
	})
	return refs, errors.Join(errs...)
}

func parseRef(raw string, ids map[string]bool) (Ref, error) {
	rest := strings.TrimPrefix(raw, refPrefix(raw))
	parts := strings.Split(rest, ".")
	for n := len(parts); n > 0; n-- {
		id := strings.Join(parts[:n], ".")
		if !ids[id] {
			continue
		}
		if n == len(parts) {
			return Ref{}, fmt.Errorf("reference %s: no attribute path after resource %s", raw, id)
		}
		return Ref{Raw: raw, ResourceID: id, Path: slices.Clone(parts[n:])}, nil
	}
	return Ref{}, fmt.Errorf("reference %s: no resource with that id in the spec", raw)
}

// walkStrings calls f for every string value in v, in a deterministic order.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkStrings(x[k], f)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

// ResolveRefs returns a deep copy of attrs (normalized, see Normalize) in which every
// string equal to the Raw of one of refs is replaced by the value at Path in the live
// attributes of that resource, keeping its type (a number stays a number, an object an
// object). live returns a resource's live attributes, or false when it does not exist.
// A missing resource or path is an error naming the reference; all are reported.
func ResolveRefs(attrs map[string]any, refs []Ref, live func(id string) (map[string]any, bool)) (map[string]any, error) {
	values := make(map[string]any, len(refs))
	var errs []error
	for _, ref := range refs {
		if _, done := values[ref.Raw]; done {
			continue
		}
		v, err := resolveRef(ref, live)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		values[ref.Raw] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := replaceStrings(Normalize(attrs), values)
	if out == nil {
		return nil, nil
	}
	return out.(map[string]any), nil
}

func resolveRef(ref Ref, live func(id string) (map[string]any, bool)) (any, error) {
	obj, ok := live(ref.ResourceID)
	if !ok {
		return nil, fmt.Errorf("resolve %s: resource %s does not exist", ref.Raw, ref.ResourceID)
	}
	v, ok := tree.Lookup(obj, ref.Path)
	if !ok {
		return nil, fmt.Errorf("resolve %s: field %q not found in %s", ref.Raw, strings.Join(ref.Path, "."), ref.ResourceID)
	}
	return Normalize(v), nil
}

// replaceStrings replaces, in place, strings of a normalized tree found in values.
func replaceStrings(v any, values map[string]any) any {
	switch x := v.(type) {
	case string:
		if r, ok := values[x]; ok {
			return Normalize(r) // a fresh copy per occurrence
		}
	case map[string]any:
		for k, e := range x {
			x[k] = replaceStrings(e, values)
		}
	case []any:
		for i, e := range x {
			x[i] = replaceStrings(e, values)
		}
	}
	return v
}
