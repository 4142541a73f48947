package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		spec, _, err := ReadInputs([]Input{{Name: "in.yaml", Data: data}}, namespace)
		if err != nil {
			return
		}
		out, err := MarshalSpec(spec)
		if err != nil {
			t.Fatalf("MarshalSpec: %v", err)
		}
		back, err := ParseSpec(out, "out.yaml")
		if err != nil {
			t.Fatalf("ParseSpec of MarshalSpec's output: %v\n%s", err, out)
		}
		if HashSpec(back) != HashSpec(spec) {
			t.Fatalf("round trip changed the spec:\n%s", out)
		}
	})
}

// FuzzRefs: parsing a reference never panics; an accepted one names a resource of
// the spec (the longest matching ID) and a non-empty path, and spells Raw back;
// resolving it never panics either.
func FuzzRefs(f *testing.F) {
	ids := map[string]bool{}
	for _, data := range seedFiles(f) {
		s, _, err := ReadInputs([]Input{{Name: "seed", Data: data}}, "")
		if err != nil {
			continue
		}
		for i := range s.Resources {
			ids[s.Resources[i].ID] = true
			walkStrings(s.Resources[i].Attributes, func(str string) {
				if IsRef(str) {
					f.Add(str)
				}
			})
		}
	}
	ids["apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com"] = true
	ids["apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example"] = true
	f.Add("$kusion_path.apiextensions.k8s.io/v1:CustomResourceDefinition:foos.example.com.spec.names.0")
	f.Add("$kumo_path.v1:Namespace:shop.metadata.name")
	live := map[string]any{"spec": map[string]any{"names": []any{"a", map[string]any{"b": 1}}}, "metadata": map[string]any{"name": "x"}}
	f.Fuzz(func(t *testing.T, raw string) {
		ref, err := parseRef(raw, ids)
		if err != nil {
			return
		}
		if !ids[ref.ResourceID] || len(ref.Path) == 0 || ref.Raw != raw {
			t.Fatalf("parseRef(%q) = %+v", raw, ref)
		}
		if refPrefix(raw)+ref.ResourceID+"."+strings.Join(ref.Path, ".") != raw {
			t.Fatalf("parseRef(%q) = %+v does not spell the reference", raw, ref)
		}
		for n := len(ref.Path) - 1; n > 0; n-- { // the longest ID wins
			if longer := ref.ResourceID + "." + strings.Join(ref.Path[:n], "."); ids[longer] {
				t.Fatalf("parseRef(%q) chose %s over the longer %s", raw, ref.ResourceID, longer)
			}
		}
		want, found := lookupPath(live, ref.Path)
		got, err := ResolveRefs(map[string]any{"a": []any{raw}}, []Ref{ref}, func(string) (map[string]any, bool) { return live, true })
		if found != (err == nil) {
			t.Fatalf("ResolveRefs(%q): error %v, but the path is found: %v", raw, err, found)
		}
		if found && !reflect.DeepEqual(got["a"], []any{Normalize(want)}) {
			t.Fatalf("ResolveRefs(%q) = %v, want [%v]", raw, got["a"], want)
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
