package engine

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeNumbers(t *testing.T) {
	type myString string
	cases := []struct {
		in   any
		want any
	}{
		{3, int64(3)},
		{int32(3), int64(3)},
		{int64(3), int64(3)},
		{uint16(3), int64(3)},
		{3.0, int64(3)},
		{float32(2.5), 2.5},
		{2.5, 2.5},
		{json.Number("42"), int64(42)},
		{json.Number("1e3"), int64(1000)},
		{json.Number("0.25"), 0.25},
		{json.Number("-9223372036854775808"), int64(math.MinInt64)},
		{1e30, 1e30}, // integral but out of int64 range
		{uint64(math.MaxUint64), float64(math.MaxUint64)},
		{myString("x"), "x"},
		{true, true},
		{nil, nil},
	}
	for _, c := range cases {
		got := Normalize(c.in)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Normalize(%#v) = %#v (%T), want %#v (%T)", c.in, got, got, c.want, c.want)
		}
	}
}

func TestNormalizeTreesFromDifferentSources(t *testing.T) {
	// The same object as typed Go values (as a client library builds it) ...
	typed := map[string]any{
		"spec": map[string]any{
			"replicas": int32(2),
			"ports":    []map[string]any{{"port": 80, "name": "http"}},
			"labels":   map[string]string{"app": "web"},
			"ratio":    0.5,
		},
		"ptr": (*int)(nil),
	}
	// ... and as a JSON round trip yields it.
	var decoded map[string]any
	raw := `{"spec":{"replicas":2,"ports":[{"port":80.0,"name":"http"}],"labels":{"app":"web"},"ratio":0.5},"ptr":null}`
	if err := json.Unmarshal([]byte(raw), &decoded); err != nil {
		t.Fatal(err)
	}
	a, b := Normalize(typed), Normalize(decoded)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("normalized trees differ:\n%#v\n%#v", a, b)
	}
	// Deep copy: changing the result leaves the input alone.
	a.(map[string]any)["spec"].(map[string]any)["replicas"] = int64(9)
	if typed["spec"].(map[string]any)["replicas"] != int32(2) {
		t.Fatal("Normalize did not copy")
	}
	if got := b.(map[string]any)["spec"].(map[string]any)["replicas"]; got != int64(2) {
		t.Fatalf("replicas = %#v, want int64(2)", got)
	}
}

func TestNormalizeStructsAndBytes(t *testing.T) {
	type port struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	}
	got := Normalize(map[string]any{"p": port{"http", 80}, "b": []byte("hi")})
	want := map[string]any{"p": map[string]any{"name": "http", "port": int64(80)}, "b": "aGk="}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// TestNormalizeDecodedMatchesNormalize: on trees decoded from JSON, with and
// without UseNumber, NormalizeDecoded gives what Normalize gives, and it
// gives it in the decoded tree itself (no copy).
func TestNormalizeDecodedMatchesNormalize(t *testing.T) {
	raw := `{"a":1,"b":2.5,"c":"x","d":true,"e":null,"f":[1,{"g":1e3,"h":[]},"y",null],"i":{},"j":-9223372036854775808,"k":1e30}`
	for _, useNumber := range []bool{true, false} {
		decode := func() map[string]any {
			dec := json.NewDecoder(strings.NewReader(raw))
			if useNumber {
				dec.UseNumber()
			}
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		want := Normalize(decode())
		tree := decode()
		got := NormalizeDecoded(tree)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("useNumber %v: NormalizeDecoded = %#v, want %#v", useNumber, got, want)
		}
		if tree["a"] != int64(1) || tree["f"].([]any)[1].(map[string]any)["g"] != int64(1000) {
			t.Errorf("useNumber %v: the decoded tree was not converted in place: %#v", useNumber, tree)
		}
	}
	if NormalizeDecoded(map[string]any(nil)) != nil || NormalizeDecoded([]any(nil)) != nil {
		t.Error("nil map or slice is not nil")
	}
}
