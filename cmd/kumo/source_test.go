package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadFileArg(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"b.yaml": "b", "a.json": "a", "c.YML": "c", "notes.txt": "skip", "sub/d.yaml": "d", "sub/deeper/e.yml": "e", "only/sub/f.yaml": "f",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := func(recursive bool) []string {
		inputs, err := readFileArg(dir, recursive, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, in := range inputs {
			rel, _ := filepath.Rel(dir, in.Name)
			out = append(out, rel+"="+string(in.Data))
		}
		return out
	}
	if got, want := names(false), []string{"a.json=a", "b.yaml=b", "c.YML=c"}; !slices.Equal(got, want) {
		t.Errorf("flat: %v, want %v", got, want)
	}
	if got, want := names(true), []string{"a.json=a", "b.yaml=b", "c.YML=c", "only/sub/f.yaml=f", "sub/d.yaml=d", "sub/deeper/e.yml=e"}; !slices.Equal(got, want) {
		t.Errorf("recursive: %v, want %v", got, want)
	}
	in, err := readFileArg("-", false, strings.NewReader("from stdin"))
	if err != nil || len(in) != 1 || in[0].Name != "<stdin>" || string(in[0].Data) != "from stdin" {
		t.Errorf("stdin: %+v, %v", in, err)
	}
	if _, err := readFileArg(filepath.Join(dir, "sub", "deeper", "nothing"), false, nil); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := readFileArg(filepath.Join(dir, "only"), false, nil); err == nil || !strings.Contains(err.Error(), "no .yaml, .yml, .json files (-R reads subdirectories too)") {
		t.Errorf("directory without manifests: %v", err)
	}
}
