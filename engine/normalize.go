package engine

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// Normalize returns a deep copy of v as a canonical JSON-like tree: objects become
// map[string]any, arrays []any, strings string, booleans bool, and numbers int64 when
// they are integral (whatever their Go type: int, int32, uint16, float64, json.Number,
// ...) and float64 otherwise. nil maps, slices and pointers become nil. Values of
// other types (structs, ...) go through encoding/json first.
//
// Two values that mean the same JSON are reflect.DeepEqual after Normalize, whether
// they came from YAML, from the Kubernetes API or from a JSON round-trip.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case bool:
		return x
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float64:
		return normalizeFloat(x)
	case json.Number:
		return normalizeNumber(x)
	case map[string]any:
		if x == nil {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []any:
		if x == nil {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case json.Marshaler, encoding.TextMarshaler:
		return viaJSON(v)
	}
	return normalizeReflect(reflect.ValueOf(v))
}

func normalizeReflect(rv reflect.Value) any {
	switch rv.Kind() {
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return float64(u)
		}
		return int64(u)
	case reflect.Float32, reflect.Float64:
		return normalizeFloat(rv.Float())
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return Normalize(rv.Elem().Interface())
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		if rv.Type().Key().Kind() != reflect.String {
			return viaJSON(rv.Interface())
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[it.Key().String()] = Normalize(it.Value().Interface())
		}
		return out
	case reflect.Slice:
		if rv.IsNil() {
			return nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return viaJSON(rv.Interface()) // []byte is a base64 string in JSON
		}
		fallthrough
	case reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = Normalize(rv.Index(i).Interface())
		}
		return out
	}
	return viaJSON(rv.Interface())
}

// viaJSON normalizes a value by encoding it to JSON and decoding it back. A value that
// cannot be encoded is returned unchanged.
func viaJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return Normalize(out)
}

func normalizeFloat(f float64) any {
	// Integral floats in int64 range become int64; -2^63 is exact, 2^63 is not in range.
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f)
	}
	return f
}

func normalizeNumber(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return string(n) // not a number at all; keep the text
	}
	return normalizeFloat(f)
}

// NormalizeDecoded is Normalize for a tree fresh from a JSON decoder (with
// UseNumber, or not) that nothing else holds: it converts the numbers where
// they are, in the tree's own maps and slices, instead of copying the tree.
// Decoding a release of 50,000 resources, the copy was as large as the tree
// itself. Values no JSON decoder makes are normalized as Normalize does.
func NormalizeDecoded(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil
		}
		for k, e := range x {
			switch e.(type) {
			case string, bool, nil:
			default:
				x[k] = NormalizeDecoded(e)
			}
		}
		return x
	case []any:
		if x == nil {
			return nil
		}
		for i, e := range x {
			x[i] = NormalizeDecoded(e)
		}
		return x
	}
	return Normalize(v)
}
