package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBuildWritesTheDatabaseLayout: index/db.json, index/modules.json (each
// module's entries with the version that fixes each, none when the
// vulnerability came back after its last fix) and ID/<id>.json as they were.
func TestBuildWritesTheDatabaseLayout(t *testing.T) {
	src := t.TempDir()
	entries := map[string]string{
		"GO-2026-0001": `{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z","affected":[{"package":{"name":"example.com/a"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.2.3"},{"introduced":"1.3.0"},{"fixed":"1.10.0"}]}]}]}`,
		"GO-2026-0002": `{"id":"GO-2026-0002","modified":"2026-01-02T03:04:05Z","affected":[{"package":{"name":"example.com/a"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"0.9.0"},{"introduced":"1.0.0-rc.1"}]}]},{"package":{"name":"stdlib"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.26.9"},{"fixed":"1.27.0-rc.2"}]}]}]}`,
	}
	for id, body := range entries {
		if err := os.WriteFile(filepath.Join(src, id+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "db")
	cut := time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)
	if n, err := build(src, out, cut); err != nil || n != 2 {
		t.Fatalf("build: %d, %v", n, err)
	}
	var db struct{ Modified time.Time }
	readJSON(t, filepath.Join(out, "index", "db.json"), &db)
	if !db.Modified.Equal(cut) {
		t.Errorf("db modified %s, want %s", db.Modified, cut)
	}
	var modules []module
	readJSON(t, filepath.Join(out, "index", "modules.json"), &modules)
	fixed := map[string]string{}
	for _, m := range modules {
		for _, v := range m.Vulns {
			fixed[m.Path+" "+v.ID] = v.Fixed
		}
	}
	want := map[string]string{
		"example.com/a GO-2026-0001": "1.10.0",
		"example.com/a GO-2026-0002": "",
		"stdlib GO-2026-0002":        "1.27.0-rc.2",
	}
	if len(fixed) != len(want) {
		t.Errorf("modules index %v, want %v", fixed, want)
	}
	for k, v := range want {
		if got, ok := fixed[k]; !ok || got != v {
			t.Errorf("%s: fixed %q, want %q", k, got, v)
		}
	}
	for id, body := range entries {
		if got, err := os.ReadFile(filepath.Join(out, "ID", id+".json")); err != nil || string(got) != body {
			t.Errorf("ID/%s.json: %v", id, err)
		}
	}

	if err := os.WriteFile(filepath.Join(src, "misnamed.json"), []byte(entries["GO-2026-0001"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := build(src, out, cut); err == nil {
		t.Error("an entry in a file not named after its id was taken")
	}
}

func TestLess(t *testing.T) {
	for _, c := range [][2]string{{"", "0.0.1"}, {"1.2.3", "1.10.0"}, {"1.27.0-rc.2", "1.27.0"}, {"1.0.0-rc.1", "1.0.0-rc.2"}, {"1.0.0-1", "1.0.0-alpha"}} {
		if !less(c[0], c[1]) || less(c[1], c[0]) {
			t.Errorf("%q < %q does not hold", c[0], c[1])
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
