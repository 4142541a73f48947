package engine_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// escapedA marshals as a string with an escape encoding/json would not
// write ("\u0041" for "A").
type escapedA struct{}

func (escapedA) MarshalJSON() ([]byte, error) { return []byte(`"\u0041"`), nil }

type tagged struct {
	Zeta  string            `json:"zeta"`
	Alpha int               `json:"alpha,omitempty"`
	Map   map[string]uint16 `json:"map"`
	Bytes []byte            `json:"bytes"`
	When  time.Time         `json:"when"`
}

// canonicalCases are specs whose encodings take every turn of the one-pass
// canonical encoding; fast says it must not need the long way.
var canonicalCases = []struct {
	name string
	spec *engine.Spec
	fast bool
}{
	{"empty", &engine.Spec{}, true},
	{"config maps", configMapSpec(3), true},
	{"strings encoding/json escapes", attrSpec(map[string]any{
		"html": "<a href=\"x\">&amp;</a>", "sep": "a\u2028b\u2029c", "ctl": "tab\there\nnew\x01\x7f",
		"bad utf-8": "x\xffy\xc3", "unicode": "héllo wörld ☃ 𝄞", "quote": `"\`,
	}), true},
	{"keys encoding/json escapes, out of order", attrSpec(map[string]any{
		"z<": 1, "a&": 2, "\u2028": 3, "é": 4, "\xff": 5, "A": 6, "": 7,
	}), true},
	{"numbers", attrSpec(map[string]any{
		"int": 1, "int32": int32(-7), "uint64 max": uint64(math.MaxUint64), "float": 1.5, "integral float": 3.0,
		"big float": 1e21, "small float": 1e-7, "negative zero": math.Copysign(0, -1), "max int64": int64(math.MaxInt64),
		"min int64": int64(math.MinInt64), "2^63": float64(1 << 63), "third": 1.0 / 3,
		"number 1.0": json.Number("1.0"), "number 1e3": json.Number("1e3"), "number -0": json.Number("-0"),
		"number 1e400": json.Number("1e400"), "number 20 digits": json.Number("12345678901234567890"),
		"number 0.1e1": json.Number("0.1e1"), "number 1E-2": json.Number("1E-2"),
	}), true},
	{"nested, empty and nil", attrSpec(map[string]any{
		"list": []any{map[string]any{"b": 1, "a": []any{}}, nil, true, false, "s"}, "empty map": map[string]any{},
		"nil map": map[string]any(nil), "nil list": []any(nil), "typed list": []string{"b", "a"}, "typed map": map[string]int{"y": 1, "x": 2},
	}), true},
	{"structs, bytes and times", attrSpec(map[string]any{
		"struct":  tagged{Zeta: "z", Alpha: 1, Map: map[string]uint16{"b": 2, "a": 1}, Bytes: []byte("bytes<>"), When: time.Date(2026, 11, 27, 1, 2, 3, 4, time.UTC)},
		"pointer": &tagged{Zeta: "p"},
	}), true},
	{"marshalers' text", attrSpec(map[string]any{
		"escaped": escapedA{}, "raw": json.RawMessage(`{"b": [1.0, "\u00e9"], "a": {}}`),
		"raw bad utf-8": json.RawMessage("{\"\xff\":\"\xfe\",\"a\":2,\"\xef\xbf\xbd!\":3}"),
	}), true},
	{"a key twice", attrSpec(map[string]any{"raw": json.RawMessage(`{"a":1,"a":2}`)}), false},
	{"whole spec", &engine.Spec{
		Resources:   configMapSpec(2).Resources,
		SecretStore: map[string]any{"provider": map[string]any{"vault": map[string]any{"server": "http://127.0.0.1:8200"}}},
		Context:     map[string]any{"b": "2", "a": 1},
		Hooks:       []engine.Hook{{ID: "v1:Pod:ns:h", Attributes: map[string]any{"kind": "Pod"}}},
		Moved:       []engine.Moved{{From: "v1:ConfigMap:ns:a", To: "v1:ConfigMap:ns:b"}},
	}, true},
}

func attrSpec(attrs map[string]any) *engine.Spec {
	return &engine.Spec{Resources: []engine.Resource{{ID: "v1:ConfigMap:ns:cm", Type: engine.Kubernetes, Attributes: attrs, DependsOn: []string{"b", "a"}}}}
}

func configMapSpec(n int) *engine.Spec {
	s := &engine.Spec{}
	for i := range n {
		name := "cm-" + string(rune('a'+i))
		s.Resources = append(s.Resources, engine.Resource{
			ID: "v1:ConfigMap:ns:" + name, Type: engine.Kubernetes,
			Attributes: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "ns", "labels": map[string]any{"app": "x"}}, "data": map[string]any{"key": "value"}},
			DependsOn:  []string{"v1:Namespace::ns"},
		})
	}
	return s
}

// TestHashSpecCanonical: HashSpec's one pass gives the hash the long way
// gives (the definition, under which every stored spec is named), and
// takes the long way only for what it does not handle.
func TestHashSpecCanonical(t *testing.T) {
	for _, c := range canonicalCases {
		t.Run(c.name, func(t *testing.T) {
			text, err := json.Marshal(*c.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := engine.CanonicalJSON(text)
			if ok != c.fast {
				t.Fatalf("one pass took: %v, want %v", ok, c.fast)
			}
			want, err := json.Marshal(engine.Normalize(c.spec))
			if err != nil {
				t.Fatal(err)
			}
			if ok && !bytes.Equal(got, want) {
				t.Fatalf("canonical encoding\n got %s\nwant %s", got, want)
			}
			if h, w := engine.HashSpec(c.spec), engine.HashNormalized(c.spec); h != w {
				t.Fatalf("HashSpec %s, the long way %s", h, w)
			}
		})
	}
	if engine.HashSpec(nil) != engine.HashNormalized(nil) {
		t.Fatal("nil spec")
	}
	nan := attrSpec(map[string]any{"nan": math.NaN()})
	if engine.HashSpec(nan) != engine.HashNormalized(nan) {
		t.Fatal("a spec encoding/json cannot encode")
	}
}

// FuzzHashSpec: for any JSON value as a resource's attributes (decoded with
// and without json.Number), the one pass and the long way agree.
func FuzzHashSpec(f *testing.F) {
	for _, c := range canonicalCases {
		if text, err := json.Marshal(c.spec.Resources); err == nil && len(c.spec.Resources) > 0 {
			f.Add(text)
		}
	}
	f.Add([]byte(`{"b":1e400,"a":[1.0,-0,"\u0041\ud800"],"\u003c":{"y":null,"x":true}}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, useNumber := range []bool{false, true} {
			dec := json.NewDecoder(bytes.NewReader(text))
			if useNumber {
				dec.UseNumber()
			}
			var v any
			if dec.Decode(&v) != nil {
				return
			}
			s := &engine.Spec{Resources: []engine.Resource{{ID: "x", Attributes: map[string]any{"v": v}}}, Context: map[string]any{"v": v}}
			if h, w := engine.HashSpec(s), engine.HashNormalized(s); h != w {
				t.Fatalf("%s (json.Number %v): HashSpec %s, the long way %s", text, useNumber, h, w)
			}
		}
	})
}
