// Command vulndb builds a vulnerability database that govulncheck reads with
// -db file://DIR from the OSV entries of the golang.org/x/vulndb module
// (data/osv/*.json), for machines that cannot reach the database service:
//
//	go run ./hack/vulndb -version v0.0.0-YYYYMMDDhhmmss-commit -out DIR
//
// downloads that version of the module through the Go module proxy (`go mod
// download`, cached in the module cache) and builds from it; -osv DIR builds
// from a directory of entries instead.
//
// It writes the layout of the database API (go.dev/security/vuln/database):
// DIR/index/db.json (when the newest entry was modified), DIR/index/modules.json
// (each module's entries, with the version that fixes each) and DIR/ID/<id>.json
// (the entries as they are). DIR is replaced whole, so a stale entry never stays.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	osvDir := flag.String("osv", "", "directory of OSV entries (<ID>.json), the vulndb module's data/osv")
	out := flag.String("out", "", "database directory to write (replaced)")
	version := flag.String("version", "", "the vulndb module's pseudo-version (v0.0.0-YYYYMMDDhhmmss-commit): its time is the database's modified time")
	flag.Parse()
	if (*osvDir == "" && *version == "") || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: vulndb {-version V | -osv DIR [-version V]} -out DIR")
		os.Exit(2)
	}
	if *osvDir == "" && *version != "" {
		dir, err := download(*version)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vulndb:", err)
			os.Exit(1)
		}
		*osvDir = filepath.Join(dir, "data", "osv")
	}
	var cut time.Time
	if *version != "" {
		parts := strings.Split(*version, "-")
		t, err := time.Parse("20060102150405", parts[max(len(parts)-2, 0)])
		if len(parts) < 3 || err != nil {
			fmt.Fprintf(os.Stderr, "vulndb: -version %s is not a pseudo-version v0.0.0-YYYYMMDDhhmmss-commit\n", *version)
			os.Exit(2)
		}
		cut = t
	}
	n, err := build(*osvDir, *out, cut)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
	fmt.Printf("%d entries in %s\n", n, *out)
}

// download fetches golang.org/x/vulndb@version into the module cache and
// returns its directory. It runs outside any module, so no go.mod changes.
func download(version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "golang.org/x/vulndb@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GO111MODULE=on")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s: %s", version, m.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s: %v: %s", version, err, stderr.String())
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s named no directory: %s", version, out)
	}
	return m.Dir, nil
}

// entry is the part of an OSV entry the index needs.
type entry struct {
	ID        string    `json:"id"`
	Modified  time.Time `json:"modified"`
	Published time.Time `json:"published"`
	Affected  []struct {
		Module struct {
			Path string `json:"name"`
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced string `json:"introduced,omitempty"`
				Fixed      string `json:"fixed,omitempty"`
			} `json:"events"`
		} `json:"ranges"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

// build writes the database of the entries in osvDir to out; its modified
// time is the newest entry's, or cut if later (the module's entries carry a
// zero modified time: the service sets it when it publishes them).
func build(osvDir, out string, cut time.Time) (int, error) {
	files, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("%s holds no OSV entries (*.json)", osvDir)
	}
	tmp := out + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "ID"), 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "index"), 0o755); err != nil {
		return 0, err
	}
	newest := cut
	modules := map[string]*module{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var e entry
		if err := json.Unmarshal(data, &e); err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if e.ID == "" || filepath.Base(f) != e.ID+".json" {
			return 0, fmt.Errorf("%s: an entry's file must be named <id>.json (id %q)", f, e.ID)
		}
		if e.Modified.IsZero() {
			e.Modified = e.Published
		}
		if e.Modified.After(newest) {
			newest = e.Modified
		}
		for _, a := range e.Affected {
			m := modules[a.Module.Path]
			if m == nil {
				m = &module{Path: a.Module.Path}
				modules[a.Module.Path] = m
			}
			fixed := ""
			for _, r := range a.Ranges {
				if r.Type != "SEMVER" {
					continue
				}
				var introduced []string
				for _, ev := range r.Events {
					if ev.Fixed != "" && less(fixed, ev.Fixed) {
						fixed = ev.Fixed
					}
					if ev.Introduced != "" && ev.Introduced != "0" {
						introduced = append(introduced, ev.Introduced)
					}
				}
				// Reintroduced after the latest fix: no version fixes it.
				for _, in := range introduced {
					if less(fixed, in) {
						fixed = ""
						break
					}
				}
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: fixed})
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), data, 0o644); err != nil {
			return 0, err
		}
	}
	list := make([]*module, 0, len(modules))
	for _, m := range modules {
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	if err := writeJSON(filepath.Join(tmp, "index", "modules.json"), list); err != nil {
		return 0, err
	}
	if err := writeJSON(filepath.Join(tmp, "index", "db.json"), map[string]time.Time{"modified": newest}); err != nil {
		return 0, err
	}
	if err := os.RemoveAll(out); err != nil {
		return 0, err
	}
	return len(files), os.Rename(tmp, out)
}

func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// less orders OSV semantic versions (no "v" prefix): "" before everything,
// then by major.minor.patch, a pre-release before its release.
func less(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	ac, apre, _ := strings.Cut(a, "-")
	bc, bpre, _ := strings.Cut(b, "-")
	an, bn := strings.Split(ac, "."), strings.Split(bc, ".")
	for i := 0; i < len(an) || i < len(bn); i++ {
		x, y := part(an, i), part(bn, i)
		if x != y {
			return x < y
		}
	}
	switch {
	case apre == bpre:
		return false
	case apre == "":
		return false
	case bpre == "":
		return true
	}
	return prereleaseLess(apre, bpre)
}

func part(p []string, i int) int {
	if i >= len(p) {
		return 0
	}
	n, _ := strconv.Atoi(strings.SplitN(p[i], "+", 2)[0])
	return n
}

// prereleaseLess compares pre-release identifiers as semver does: numeric
// ones numerically and before alphanumeric ones.
func prereleaseLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		x, xerr := strconv.Atoi(as[i])
		y, yerr := strconv.Atoi(bs[i])
		switch {
		case xerr == nil && yerr == nil:
			return x < y
		case xerr == nil:
			return true
		case yerr == nil:
			return false
		}
		return as[i] < bs[i]
	}
	return len(as) < len(bs)
}
