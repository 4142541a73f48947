package engine_test

// FuzzRefs seeds from the inputs in engine/input's testdata, read by
// engine/input; engine/input imports engine, so this fuzz target is outside
// package engine (export_test.go lends it the unexported helpers).

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/internal/tree"
)

// seedSpecs returns the Specs engine/input reads from each file of its
// testdata (Specs, and manifests it converts).
func seedSpecs(f *testing.F) []*engine.Spec {
	var specs []*engine.Spec
	dir := filepath.Join("input", "testdata")
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if s, _, err := input.ReadInputs([]input.File{{Name: "seed", Data: data}}, ""); err == nil {
			specs = append(specs, s)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	return specs
}

// FuzzRefs: parsing a reference never panics; an accepted one names a resource of
// the spec (the longest matching ID) and a non-empty path, and spells Raw back;
// resolving it never panics either.
func FuzzRefs(f *testing.F) {
	ids := map[string]bool{}
	for _, s := range seedSpecs(f) {
		for i := range s.Resources {
			ids[s.Resources[i].ID] = true
			engine.WalkStrings(s.Resources[i].Attributes, func(str string) {
				if engine.IsRef(str) {
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
		ref, err := engine.ParseRef(raw, ids)
		if err != nil {
			return
		}
		if !ids[ref.ResourceID] || len(ref.Path) == 0 || ref.Raw != raw {
			t.Fatalf("parseRef(%q) = %+v", raw, ref)
		}
		if engine.RefPrefixOf(raw)+ref.ResourceID+"."+strings.Join(ref.Path, ".") != raw {
			t.Fatalf("parseRef(%q) = %+v does not spell the reference", raw, ref)
		}
		for n := len(ref.Path) - 1; n > 0; n-- { // the longest ID wins
			if longer := ref.ResourceID + "." + strings.Join(ref.Path[:n], "."); ids[longer] {
				t.Fatalf("parseRef(%q) chose %s over the longer %s", raw, ref.ResourceID, longer)
			}
		}
		want, found := tree.Lookup(live, ref.Path)
		got, err := engine.ResolveRefs(map[string]any{"a": []any{raw}}, []engine.Ref{ref}, func(string) (map[string]any, bool) { return live, true })
		if found != (err == nil) {
			t.Fatalf("ResolveRefs(%q): error %v, but the path is found: %v", raw, err, found)
		}
		if found && !reflect.DeepEqual(got["a"], []any{engine.Normalize(want)}) {
			t.Fatalf("ResolveRefs(%q) = %v, want [%v]", raw, got["a"], want)
		}
	})
}
