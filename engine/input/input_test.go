package input

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// laughs is a "billion laughs" document: nine lists of nine aliases to the
// previous one, 9^9 strings once expanded (about 3 GB).
func laughs() string {
	doc := "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		doc += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
		prev = n
	}
	return doc
}

// withX is a Spec (YAML) whose Namespace has attribute x: value, on line 4,
// column 73.
func withX(value string) string {
	return "resources:\n- id: v1:Namespace:a\n  type: Kubernetes\n  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: a}, x: " + value + "}\n"
}

// withXJSON is withX as JSON, x on line 2, column 81.
func withXJSON(value string) string {
	return "{\"resources\":[{\"id\":\"v1:Namespace:a\",\"type\":\"Kubernetes\",\n \"attributes\":{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"},\"x\":" + value + "}}]}"
}

// badInputs are documents no reader of user input may accept, and what the
// error must say (the file name "in.yaml" comes first).
var badInputs = []struct {
	name, data string
	want       []string
}{
	{"billion laughs", laughs(), []string{"line 7, column 12: alias *f expands the document to more than the input size limit of 8 MiB"}},
	{"alias inside its anchor", "metadata: &m {name: a, labels: [*m]}\n", []string{"line 1, column 33: alias *m refers to the value that contains it"}},
	{"deep flow", "resources: " + strings.Repeat("[", 1500) + strings.Repeat("]", 1500), []string{"line 1, column 1012: values nest more than 1000 levels deep"}},
	{"deep block", "resources:\n" + deepBlock(1100), []string{"line 1002, column 1001: values nest more than 1000 levels deep"}},
	{"deeper than the parser goes", "resources: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000), []string{"exceeded max depth of 10000"}},
	{"deep json", `{"resources": ` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + "}", []string{"line 1, column 1015: values nest more than 1000 levels deep"}},
	{"not utf-8", withX("\"a\xff\xfe\""), []string{"line 4, column 75: byte 0xff is not UTF-8"}},
	{"not utf-8 in a comment", "# caf\xe9\n" + withX("1"), []string{"line 1, column 6: byte 0xe9 is not UTF-8"}},
	{"not utf-8, json", withXJSON("\"a\xff\""), []string{"line 2, column 83: byte 0xff is not UTF-8"}},
	{"nan", withX(".nan"), []string{"line 4, column 73: .nan is not a number JSON can hold"}},
	{"infinity", withX("-.Inf"), []string{"line 4, column 73: -.Inf is not a number JSON can hold"}},
	{"nan in a manifest", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: .NaN}\n", []string{"line 4, column 11: .NaN is not a number"}},
	{"float out of range", withX("1e400"), []string{"line 4, column 73: number 1e400 is out of the range of a 64-bit float"}},
	{"integer beyond 64 bits", withX("123456789012345678901234567890"), []string{"line 4, column 73: integer 123456789012345678901234567890 does not fit in 64 bits"}},
	{"integer just beyond int64", withX("9223372036854775808"), []string{"line 4, column 73: integer 9223372036854775808 does not fit in 64 bits"}},
	{"float out of range, json", withXJSON("1e400"), []string{"line 2, column 81: number 1e400 is out of the range"}},
	{"integer beyond 64 bits, json", withXJSON("-123456789012345678901234567890"), []string{"line 2, column 81: integer -123456789012345678901234567890 does not fit"}},
	{"nan, json", withXJSON("NaN"), []string{"line 1: invalid character 'N'"}},
}

// TestBadInputIsRefused: every reader of user input (a Spec, manifests, a
// configuration file) refuses each bad input with an error naming the file
// and, where one is known, the line and column.
func TestBadInputIsRefused(t *testing.T) {
	readers := map[string]func(data []byte) error{
		"ReadInputs": func(data []byte) error {
			_, _, err := ReadInputs([]File{{Name: "in.yaml", Data: data}}, "")
			return err
		},
		"ParseSpec": func(data []byte) error { _, err := ParseSpec(data, "in.yaml"); return err },
		"ParseYAML": func(data []byte) error { _, err := ParseYAML(data, "in.yaml"); return err },
	}
	for _, c := range badInputs {
		for reader, read := range readers {
			t.Run(c.name+"/"+reader, func(t *testing.T) {
				err := read([]byte(c.data))
				if err == nil {
					t.Fatal("accepted")
				}
				for _, w := range append([]string{"in.yaml: "}, c.want...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
			})
		}
	}
}

// TestGoodInputIsKept: what looks like the bad inputs but is fine is read as
// written: quoted numbers are text, anchors that repeat a little are expanded,
// large floats are numbers, a UTF-8 BOM or text is fine.
func TestGoodInputIsKept(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       any
	}{
		{"quoted out-of-range number", withX(`"1e400"`), "1e400"},
		{"quoted nan", withX(`'.nan'`), ".nan"},
		{"tagged string", withX(`!!str 123456789012345678901234567890`), "123456789012345678901234567890"},
		{"large float", withX("1.5e300"), 1.5e300},
		{"largest int64", withX("9223372036854775807"), int64(9223372036854775807)},
		{"float beyond int64", withX("1e19"), 1e19},
		{"utf-8", withX("\"caf\u00e9 \u2603\""), "caf\u00e9 \u2603"},
		{"anchors", "resources:\n- id: v1:Namespace:a\n  type: Kubernetes\n  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: a, labels: &l {app: x}, annotations: *l}, x: *l}\n",
			map[string]any{"app": "x"}},
		{"nested 1000 deep", withX(strings.Repeat("[", 996) + strings.Repeat("]", 996)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(c.data), "in.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Resources[0].Attributes["x"]; c.want != nil && !equalValues(got, c.want) {
				t.Errorf("x = %#v, want %#v", got, c.want)
			}
		})
	}
}

func equalValues(a, b any) bool {
	return engine.HashSpec(&engine.Spec{Context: map[string]any{"v": a}}) == engine.HashSpec(&engine.Spec{Context: map[string]any{"v": b}})
}

// TestInputSizeLimit: input over the limit is refused before it is parsed,
// naming the source and how to raise the limit (ReadFile and Read check it
// while reading).
func TestInputSizeLimit(t *testing.T) {
	SetMaxSize(1 << 10)
	t.Cleanup(func() { SetMaxSize(0) })
	big := withX(`"` + strings.Repeat("x", 2000) + `"`)
	for name, read := range map[string]func() error{
		"ReadInputs": func() error { _, _, err := ReadInputs([]File{{Name: "in.yaml", Data: []byte(big)}}, ""); return err },
		"ParseSpec":  func() error { _, err := ParseSpec([]byte(big), "in.yaml"); return err },
		"ParseYAML":  func() error { _, err := ParseYAML([]byte(big), "in.yaml"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := read()
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "in.yaml: 2.1 KiB is over the input size limit of 1 KiB (raise it with --max-input-size or $KUMO_MAX_INPUT_SIZE)") {
				t.Errorf("error %v, want in.yaml over the limit", err)
			}
		})
	}
	SetMaxSize(4 << 10)
	if _, _, err := ReadInputs([]File{{Name: "in.yaml", Data: []byte(big)}}, ""); err != nil {
		t.Error(err)
	}
	SetMaxSize(0)
	if got := MaxSize(); got != DefaultMaxSize {
		t.Errorf("MaxSize() = %d after SetMaxSize(0), want the default", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "8Mi": 8 << 20, "512KiB": 512 << 10, "1Gi": 1 << 30, "10M": 10e6, "3kB": 3000, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "8.5Mi", "8Xi", "Mi", "99999999999Gi"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "-\n")
	}
	return b.String()
}

// BenchmarkBadInputs: how long each bad input takes to be refused.
func BenchmarkBadInputs(b *testing.B) {
	for _, c := range badInputs {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ReadInputs([]File{{Name: "in.yaml", Data: []byte(c.data)}}, ""); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// BenchmarkLargeSpec: a Spec just under the default size limit, read whole, and
// the same with a NaN in its last resource (refused only once it is parsed).
func BenchmarkLargeSpec(b *testing.B) {
	var spec strings.Builder
	spec.WriteString("resources:\n")
	for i := 0; spec.Len() < DefaultMaxSize-1<<10; i++ {
		fmt.Fprintf(&spec, "- id: v1:ConfigMap:demo:cm%d\n  type: Kubernetes\n  attributes:\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: cm%d, namespace: demo, labels: {app: web}}\n    data: {k: v, n: \"12\"}\n", i, i)
	}
	good := spec.String()
	bad := good + "- id: v1:ConfigMap:demo:nan\n  type: Kubernetes\n  attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: nan, namespace: demo}, x: .nan}\n"
	for name, data := range map[string]string{"valid": good, "nan_at_the_end": bad} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				_, _, err := ReadInputs([]File{{Name: "in.yaml", Data: []byte(data)}}, "")
				if (err != nil) != (name != "valid") {
					b.Fatal(err)
				}
			}
		})
	}
}
