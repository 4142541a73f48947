package engine

import "maps"

// SpecChangeKind says how a resource differs between two specs.
type SpecChangeKind string

const (
	Added   SpecChangeKind = "added"
	Removed SpecChangeKind = "removed"
	Changed SpecChangeKind = "changed"
)

// SpecChange is one resource that differs between two specs, with the fields that
// changed (attributes.*, dependsOn, extensions.*, type) when it is in both.
type SpecChange struct {
	ID     string         `json:"id"`
	Kind   SpecChangeKind `json:"kind"`
	Fields []FieldChange  `json:"fields,omitempty"`
}

// DiffSpecs compares two specs resource by resource: resources of to in its
// order (added or changed), then those only in from (removed). Equal specs give
// no changes.
func DiffSpecs(from, to *Spec) []SpecChange {
	before := map[string]*Resource{}
	for i := range from.Resources {
		before[from.Resources[i].ID] = &from.Resources[i]
	}
	inTo := map[string]bool{}
	var out []SpecChange
	for i := range to.Resources {
		r := &to.Resources[i]
		inTo[r.ID] = true
		old, ok := before[r.ID]
		if !ok {
			out = append(out, SpecChange{ID: r.ID, Kind: Added})
			continue
		}
		var fields []FieldChange
		fp := fingerprinted(old, r)
		diffValue(nil, comparableResource(fp[0]), comparableResource(fp[1]), true, true, &fields)
		maskFields(fields)
		if len(fields) > 0 {
			out = append(out, SpecChange{ID: r.ID, Kind: Changed, Fields: fields})
		}
	}
	for i := range from.Resources {
		if r := &from.Resources[i]; !inTo[r.ID] {
			out = append(out, SpecChange{ID: r.ID, Kind: Removed})
		}
	}
	return out
}

func comparableResource(r *Resource) map[string]any {
	m := map[string]any{"type": string(r.Type), "attributes": r.Attributes}
	if len(r.DependsOn) > 0 {
		deps := make([]any, len(r.DependsOn))
		for i, d := range r.DependsOn {
			deps[i] = d
		}
		m["dependsOn"] = deps
	}
	if ext := maps.Clone(r.Extensions); len(ext) > 0 {
		// Which attributes are sensitive is the runtime's record, not the spec's.
		delete(ext, ExtSensitiveAttributes)
		if len(ext) > 0 {
			m["extensions"] = ext
		}
	}
	out, _ := Normalize(m).(map[string]any)
	return out
}
