package input

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// seedFiles adds every file under testdata to f's corpus.
func seedFiles(f *testing.F) [][]byte {
	var out [][]byte
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".md" {
			return err
		}
		data, err := os.ReadFile(path)
		out = append(out, data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	return out
}

// smallBadInputs are the bad inputs small enough to seed a fuzzer (which spends
// its time minimizing large ones).
func smallBadInputs() []string {
	var out []string
	for _, c := range badInputs {
		if len(c.data) < 4<<10 {
			out = append(out, c.data)
		}
	}
	return out
}

// FuzzReadInputs: the manifest reader never panics, and whatever it accepts is a
// Spec that MarshalSpec writes and ParseSpec reads back unchanged.
func FuzzReadInputs(f *testing.F) {
	for _, data := range seedFiles(f) {
		f.Add(data, "")
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"), "ns")
	f.Add([]byte("--- \n...\n---\n%YAML 1.2\n"), "")
	for _, c := range smallBadInputs() {
		f.Add([]byte(c), "")
	}
	f.Fuzz(func(t *testing.T, data []byte, namespace string) {
		spec, _, err := ReadInputs([]File{{Name: "in.yaml", Data: data}}, namespace)
		if err != nil {
			return
		}
		out, err := engine.MarshalSpec(spec)
		if err != nil {
			t.Fatalf("MarshalSpec: %v", err)
		}
		back, err := ParseSpec(out, "out.yaml")
		if err != nil {
			t.Fatalf("ParseSpec of MarshalSpec's output: %v\n%s", err, out)
		}
		if engine.HashSpec(back) != engine.HashSpec(spec) {
			t.Fatalf("round trip changed the spec:\n%s", out)
		}
	})
}

// FuzzParseYAML: the reader of configuration files never panics, and what it
// accepts is within the bounds it promises: JSON can hold it (no NaN or
// infinity), no number is out of range, nothing nests deeper than MaxDepth.
func FuzzParseYAML(f *testing.F) {
	for _, data := range seedFiles(f) {
		f.Add(data)
	}
	for _, c := range smallBadInputs() {
		f.Add([]byte(c))
	}
	f.Add([]byte("a: &a {b: [1, 2.5, '1e400', !!str 1e400]}\nc: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseYAML(data, "in.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "in.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("accepted a value JSON cannot hold: %v", err)
		}
		if f := walkValues(v, 0, false); f.msg != "" {
			t.Fatalf("accepted a value out of bounds: %s at %v", f.msg, f.path)
		}
	})
}
