package generate

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// fieldError is a problem with one field of a user's file: path is the dotted path
// from the top of the file (apps.web.workload.containers.web.image).
type fieldError struct {
	path string
	msg  string
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

func errorAt(path, format string, args ...any) error {
	return &fieldError{path: path, msg: fmt.Sprintf(format, args...)}
}

// join appends a key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode fills out (a pointer) from a plain value, strictly: a key that is not a
// field of the target (json tag names, exact case) or a value of the wrong kind is
// an error naming its path. Scalars are accepted for string fields and formatted,
// so that `PORT: 8080` in an env map is the string "8080".
func decode(path string, in any, out any) error {
	return decodeValue(path, in, reflect.ValueOf(out).Elem())
}

func decodeValue(path string, in any, out reflect.Value) error {
	if in == nil {
		out.SetZero()
		return nil
	}
	if out.Kind() == reflect.Interface {
		out.Set(reflect.ValueOf(in))
		return nil
	}
	// A type that reads itself from JSON (a duration written "5m") does so here too.
	if u, ok := unmarshaler(out); ok {
		b, err := json.Marshal(in)
		if err == nil {
			err = u.UnmarshalJSON(b)
		}
		if err != nil {
			return errorAt(path, "%v", err)
		}
		return nil
	}
	switch out.Kind() {
	case reflect.Pointer:
		v := reflect.New(out.Type().Elem())
		if err := decodeValue(path, in, v.Elem()); err != nil {
			return err
		}
		out.Set(v)
		return nil
	case reflect.Struct:
		m, ok := in.(map[string]any)
		if !ok {
			return errorAt(path, "want a mapping, got %s", describe(in))
		}
		fields := structFields(out.Type())
		for _, k := range sortedKeys(m) {
			idx, ok := fields[k]
			if !ok {
				return errorAt(path, "unknown field %q (known fields: %s)", k, strings.Join(sortedKeys(fields), ", "))
			}
			if err := decodeValue(join(path, k), m[k], out.FieldByIndex(idx)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		m, ok := in.(map[string]any)
		if !ok {
			return errorAt(path, "want a mapping, got %s", describe(in))
		}
		if out.Type().Elem().Kind() == reflect.Interface {
			out.Set(reflect.ValueOf(m))
			return nil
		}
		res := reflect.MakeMapWithSize(out.Type(), len(m))
		for _, k := range sortedKeys(m) {
			v := reflect.New(out.Type().Elem()).Elem()
			if err := decodeValue(join(path, k), m[k], v); err != nil {
				return err
			}
			res.SetMapIndex(reflect.ValueOf(k), v)
		}
		out.Set(res)
		return nil
	case reflect.Slice:
		list, ok := in.([]any)
		if !ok {
			return errorAt(path, "want a list, got %s", describe(in))
		}
		res := reflect.MakeSlice(out.Type(), len(list), len(list))
		for i, item := range list {
			if err := decodeValue(fmt.Sprintf("%s[%d]", path, i), item, res.Index(i)); err != nil {
				return err
			}
		}
		out.Set(res)
		return nil
	case reflect.String:
		switch v := in.(type) {
		case string:
			out.SetString(v)
		case int64:
			out.SetString(strconv.FormatInt(v, 10))
		case float64:
			out.SetString(strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			out.SetString(strconv.FormatBool(v))
		default:
			return errorAt(path, "want a string, got %s", describe(in))
		}
		return nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := in.(int64)
		if f, isFloat := in.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			n, ok = int64(f), true
		}
		if !ok || out.OverflowInt(n) {
			return errorAt(path, "want a whole number, got %s", describe(in))
		}
		out.SetInt(n)
		return nil
	case reflect.Bool:
		b, ok := in.(bool)
		if !ok {
			return errorAt(path, "want true or false, got %s", describe(in))
		}
		out.SetBool(b)
		return nil
	}
	return errorAt(path, "cannot decode into %s", out.Type())
}

func unmarshaler(v reflect.Value) (json.Unmarshaler, bool) {
	if !v.CanAddr() {
		return nil, false
	}
	u, ok := v.Addr().Interface().(json.Unmarshaler)
	return u, ok
}

// structFields maps each json field name of t (embedded structs flattened) to its index.
func structFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for name, idx := range structFields(f.Type) {
				out[name] = append([]int{i}, idx...)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = []int{i}
	}
	return out
}

func describe(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return strconv.Quote(x)
	default:
		return fmt.Sprintf("%v", x)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// merge returns defaults overlaid with override, key by key: nested mappings merge,
// anything else (lists included) in override replaces the default. Neither input is
// modified.
func merge(defaults, override map[string]any) map[string]any {
	out := make(map[string]any, len(defaults)+len(override))
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range override {
		dm, dok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if dok && ook {
			out[k] = merge(dm, om)
			continue
		}
		out[k] = v
	}
	return out
}
