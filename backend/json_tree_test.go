package backend

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// treeCases are trees a treeWriter must encode as encoding/json does,
// through each of its turns.
var treeCases = map[string]any{
	"object":                        map[string]any{"b": int64(1), "a": []any{"x", true, false, nil, map[string]any{}}, "": "empty key"},
	"nil map and slice":             map[string]any{"m": map[string]any(nil), "s": []any(nil), "e": []any{}},
	"strings encoding/json escapes": []any{"<a>&", "q\"b\\", "tab\t", "\x01", "\x7f", "é", "\u2028", "bad \xff", "plain"},
	"keys encoding/json escapes":    map[string]any{"<": int64(1), "é": int64(2), "\xff": int64(3), "a\"b": int64(4)},
	"numbers":                       []any{int64(math.MinInt64), int64(math.MaxInt64), 1.5, 1e21, 1e-7, math.Copysign(0, -1)},
	"other types":                   map[string]any{"n": json.Number("1.0"), "i": 3, "typed": map[string]int{"b": 1, "a": 2}, "bytes": []byte("x")},
}

func TestTreeWriter(t *testing.T) {
	for name, v := range treeCases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeTree(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
	if _, err := encodeTree(map[string]any{"nan": math.NaN()}); err == nil {
		t.Fatal("a NaN encoded")
	}
}

// FuzzTreeWriter: for any JSON value, as the decoder and objectOf leave it
// (numbers normalized), a treeWriter writes what encoding/json writes.
func FuzzTreeWriter(f *testing.F) {
	for _, v := range treeCases {
		if text, err := json.Marshal(v); err == nil {
			f.Add(text)
		}
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var v any
		if json.Unmarshal(text, &v) != nil {
			return
		}
		for _, tree := range []any{v, engine.Normalize(v)} {
			want, err := json.Marshal(tree)
			if err != nil {
				t.Skip()
			}
			got, err := encodeTree(tree)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: got %s (%v), want %s", text, got, err, want)
			}
		}
	})
}

func encodeTree(v any) ([]byte, error) {
	var w treeWriter
	return w.encode(v)
}
