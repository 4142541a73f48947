package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SealedMarker starts every value the backend seals ("kumo:sealed:v1:<key
// ID>:..."; see internal/keyring). A sealed value is bound to the project,
// workspace, resource and field it was sealed for, and only the backend opens
// it, when it reads its own records.
const SealedMarker = "kumo:sealed:"

// ErrSealedCopied: a spec holds a sealed value. Sealed values are never input:
// one copied from a release file (of this or another project) into a spec would
// otherwise be decrypted by the worker and applied where it does not belong.
var ErrSealedCopied = errors.New("sealed values cannot be copied between resources")

// CheckNoSealed reports each field of s's resources (attributes and
// extensions, at any depth, also inside a longer string such as kubectl's
// last-applied annotation) holding a sealed value, naming the resource and the
// field but not the value.
func (s *Spec) CheckNoSealed() []error {
	var errs []error
	for i := range s.Resources {
		r := &s.Resources[i]
		for _, top := range []struct {
			name string
			v    map[string]any
		}{{"attributes", r.Attributes}, {"extensions", r.Extensions}} {
			for _, field := range sealedFields(top.v, "") {
				errs = append(errs, fmt.Errorf("%s: %s%s: %w", where(i, r.ID), top.name, field, ErrSealedCopied))
			}
		}
	}
	return errs
}

// sealedFields returns the JSON pointers, under prefix, of the strings in v
// holding SealedMarker, in a stable order.
func sealedFields(v any, prefix string) []string {
	var out []string
	switch v := v.(type) {
	case string:
		if strings.Contains(v, SealedMarker) {
			out = append(out, prefix)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.Contains(k, SealedMarker) {
				out = append(out, prefix+Pointer(k))
			}
			out = append(out, sealedFields(v[k], prefix+Pointer(k))...)
		}
	case []any:
		for i, e := range v {
			out = append(out, sealedFields(e, prefix+"/"+strconv.Itoa(i))...)
		}
	case []string:
		return sealedFields(anySlice(v), prefix)
	case map[string]string:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = e
		}
		return sealedFields(m, prefix)
	}
	return slices.Compact(out)
}

func anySlice(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}
