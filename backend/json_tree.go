package backend

import (
	"encoding/json"
	"slices"
	"strconv"
)

// treeWriter writes json.Marshal(v) for a tree as objectOf and the decoder
// make it (maps of string keys, slices, strings, int64, booleans, nil),
// without reflection: a state's digest covers every resource's JSON, so
// writing a release and reading one back each encoded every resource
// through encoding/json's reflection. A value of any other type, and a
// string encoding/json escapes, is encoded by encoding/json itself; the
// bytes are the same either way.
//
// One writer encodes one resource after another into the same buffer.
type treeWriter struct {
	buf []byte
	// keys holds the keys of the objects being written, innermost last.
	keys []string
}

// encode returns v's JSON, valid until the next call.
func (w *treeWriter) encode(v any) ([]byte, error) {
	w.buf, w.keys = w.buf[:0], w.keys[:0]
	if err := w.value(v); err != nil {
		return nil, err
	}
	return w.buf, nil
}

func (w *treeWriter) value(v any) error {
	switch x := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case string:
		return w.str(x)
	case int64:
		w.buf = strconv.AppendInt(w.buf, x, 10)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case map[string]any:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return nil
		}
		base := len(w.keys)
		for k := range x {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[base:]
		slices.Sort(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.str(k); err != nil {
				return err
			}
			w.buf = append(w.buf, ':')
			if err := w.value(x[k]); err != nil {
				return err
			}
		}
		w.keys = w.keys[:base]
		w.buf = append(w.buf, '}')
	case []any:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return nil
		}
		w.buf = append(w.buf, '[')
		for i, e := range x {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.value(e); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
	default:
		text, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.buf = append(w.buf, text...)
	}
	return nil
}

// str quotes s as encoding/json does: printable ASCII that needs no escape
// as it is, anything else through encoding/json.
func (w *treeWriter) str(s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			text, err := json.Marshal(s)
			if err != nil {
				return err
			}
			w.buf = append(w.buf, text...)
			return nil
		}
	}
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
	return nil
}

// entry writes json.Marshal(stateEntry{ID: id, Patch: patch}), the entry of
// a resource rebuilt from a patch of the spec's (an empty patch left out,
// as omitempty leaves it), without reflection: the entry of every resource
// of a state is written at each finish. Valid until the next call.
func (w *treeWriter) entry(id string, patch map[string]any) ([]byte, error) {
	w.buf, w.keys = w.buf[:0], w.keys[:0]
	w.buf = append(w.buf, `{"id":`...)
	if err := w.str(id); err != nil {
		return nil, err
	}
	if len(patch) > 0 {
		w.buf = append(w.buf, `,"patch":`...)
		if err := w.value(patch); err != nil {
			return nil, err
		}
	}
	w.buf = append(w.buf, '}')
	return w.buf, nil
}

// identity writes json.Marshal(e) as entry does a state entry.
func (w *treeWriter) identity(e identityEntry) ([]byte, error) {
	w.buf, w.keys = w.buf[:0], w.keys[:0]
	for i, f := range []struct{ name, value string }{{"id", e.ID}, {"uid", e.UID}, {"created", e.Created}} {
		if i > 0 && f.value == "" {
			continue // omitempty
		}
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		w.buf = append(append(append(w.buf, sep, '"'), f.name...), '"', ':')
		if err := w.str(f.value); err != nil {
			return nil, err
		}
	}
	w.buf = append(w.buf, '}')
	return w.buf, nil
}
