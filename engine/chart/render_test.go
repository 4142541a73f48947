package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testCaps = Capabilities{KubeVersion: "v1.36.3", APIVersions: []string{"v1", "apps/v1", "policy/v1", "policy/v1/PodDisruptionBudget"}}

// TestRender: the test chart renders as helm template does: CRDs first, the
// vendored subchart's objects, values layered (chart defaults, a values file,
// --set), .Capabilities from the caller, .Release from the options.
func TestRender(t *testing.T) {
	r, err := Render(Options{
		Chart:        filepath.Join("testdata", "web"),
		ValueFiles:   []string{filepath.Join("testdata", "web-prod-values.yaml")},
		Set:          []string{"image=example.com/web:v9"},
		Namespace:    "shop",
		Capabilities: testCaps,
	})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Manifest
	for _, want := range []string{
		"name: widgets.charts.kumo.test",    // crds/
		"name: web-cache", "size: \"64Mi\"", // the subchart, with the parent's values for it
		"kind: PodDisruptionBudget",                  // .Capabilities.APIVersions
		`kumo.test/kube-version: "v1.36.3"`,          // .Capabilities.KubeVersion
		"replicas: 2", `message: "from-prod-values"`, // the values file
		"image: example.com/web:v9", // --set
		`namespace: "shop"`,         // .Release.Namespace
	} {
		if !strings.Contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
	hooks, tests := SplitHooks(r.Hooks)
	if h := HookNames(hooks); len(h) != 1 || h[0] != "Job/web-migrate (pre-install, pre-upgrade)" {
		t.Errorf("install hooks = %v", h)
	}
	if h := HookNames(tests); len(h) != 1 || h[0] != "Pod/web-test-connection (test)" {
		t.Errorf("test hooks = %v", h)
	}
	if strings.Contains(m, "web-migrate") || strings.Contains(m, "test-connection") {
		t.Errorf("hooks in the manifest:\n%s", m)
	}
	if !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(m, "---")), "# Source: web/crds/widget.yaml") {
		t.Errorf("CRDs do not come first:\n%.300s", m)
	}
	if r.Source.Chart != "web" || r.Source.Version != "0.1.0" || r.Source.AppVersion != "1.0" || r.Source.Release != "web" || !strings.HasPrefix(r.Source.ValuesDigest, "sha256:") {
		t.Errorf("source = %+v", r.Source)
	}

	// Without policy/v1 in the cluster, no PodDisruptionBudget; the subchart
	// off by its condition; another release name; other values, another digest.
	r2, err := Render(Options{Chart: filepath.Join("testdata", "web"), Set: []string{"cache.enabled=false"}, ReleaseName: "shop",
		Capabilities: Capabilities{KubeVersion: "v1.30.0", APIVersions: []string{"v1", "apps/v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"PodDisruptionBudget", "shop-cache"} {
		if strings.Contains(r2.Manifest, absent) {
			t.Errorf("manifest holds %s:\n%s", absent, r2.Manifest)
		}
	}
	if !strings.Contains(r2.Manifest, "name: shop-settings") || r2.Source.ValuesDigest == r.Source.ValuesDigest {
		t.Errorf("release name or digest: %+v\n%s", r2.Source, r2.Manifest)
	}
}

// TestValuesDigest: the digest follows the values, not how they were written.
func TestValuesDigest(t *testing.T) {
	a, err := Values(nil, []string{"a=1,b.c=x"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Values(nil, []string{"b.c=x", "a=1"})
	if err != nil {
		t.Fatal(err)
	}
	da, _ := ValuesDigest(a)
	db, _ := ValuesDigest(b)
	dc, _ := ValuesDigest(map[string]any{"a": 2})
	if da != db || da == dc {
		t.Errorf("digests %s %s %s", da, db, dc)
	}
}

// TestRenderErrors: a missing chart, a missing vendored dependency, a values
// file by URL and a bad --set are errors naming what is wrong.
func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	undeps := filepath.Join(dir, "undeps")
	if err := os.MkdirAll(filepath.Join(undeps, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(undeps, "Chart.yaml"), []byte("apiVersion: v2\nname: undeps\nversion: 1.0.0\ndependencies: [{name: redis, version: 1.2.3, repository: https://charts.example.com}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		opts Options
		want string
	}{
		"no chart":     {Options{Chart: filepath.Join(dir, "nothing"), Capabilities: testCaps}, "chart " + filepath.Join(dir, "nothing")},
		"not vendored": {Options{Chart: undeps, Capabilities: testCaps}, "missing in charts/ directory: redis (vendor them into charts/"},
		"url values":   {Options{Chart: filepath.Join("testdata", "web"), ValueFiles: []string{"https://example.com/v.yaml"}, Capabilities: testCaps}, "values files are read from the local filesystem"},
		"bad set":      {Options{Chart: filepath.Join("testdata", "web"), Set: []string{"a"}, Capabilities: testCaps}, "--set"},
	} {
		if _, err := Render(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
