package chart

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/ocitest"
)

// TestRenderOCI: a chart pushed to a registry (in-process, on loopback, behind
// basic auth) renders from its oci:// reference with the credentials of the
// Docker config, with or without a version; without credentials it is refused.
func TestRenderOCI(t *testing.T) {
	reg := ocitest.Start(t)
	ref := reg.PushChart(t, filepath.Join("testdata", "web"), "charts")
	t.Setenv("HELM_REGISTRY_CONFIG", filepath.Join(t.TempDir(), "none.json"))

	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials
	if _, err := Render(Options{Chart: ref, Capabilities: testCaps}); err == nil || !strings.Contains(err.Error(), "chart "+ref) {
		t.Fatalf("pull without credentials: %v", err)
	}

	t.Setenv("DOCKER_CONFIG", reg.DockerConfig)
	for _, r := range []string{ref, strings.TrimSuffix(ref, ":0.1.0")} {
		out, err := Render(Options{Chart: r, Namespace: "shop", Capabilities: testCaps})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if out.Source.Chart != "web" || out.Source.Version != "0.1.0" || !strings.HasPrefix(out.Source.Ref, ref+"@sha256:") {
			t.Errorf("%s: source %+v", r, out.Source)
		}
		for _, want := range []string{"name: widgets.charts.kumo.test", "name: web-cache", "kind: PodDisruptionBudget"} {
			if !strings.Contains(out.Manifest, want) {
				t.Errorf("%s: manifest lacks %q", r, want)
			}
		}
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:5000": true, "localhost": true, "LOCALHOST:80": true, "[::1]:5000": true, "127.8.9.10": true,
		"registry.example.com": false, "10.0.0.1:5000": false, "ghcr.io": false, "localhost.example.com": false,
	} {
		if got := loopback(host); got != want {
			t.Errorf("loopback(%q) = %v, want %v", host, got, want)
		}
	}
}
