package input

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKustomizeOverlay: an overlay over a base renders as kubectl kustomize
// renders it (namespace, prefix, both kinds of patches, a generated ConfigMap
// with its hash suffix) and reads as plain manifests.
func TestKustomizeOverlay(t *testing.T) {
	in, err := Kustomize(filepath.Join("testdata", "kustomize", "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("testdata", "kustomize", "overlay", "kustomization.yaml") + " (rendered by kustomize)"; in.Name != want {
		t.Errorf("name = %q, want %q", in.Name, want)
	}
	spec, manifests, err := ReadInputs([]File{in}, "default")
	if err != nil || !manifests {
		t.Fatalf("ReadInputs: manifests=%v, %v", manifests, err)
	}
	byID := map[string]map[string]any{}
	for _, r := range spec.Resources {
		byID[r.ID] = r.Attributes
	}
	dep := byID["apps/v1:Deployment:shop:prod-web"]
	svc := byID["v1:Service:shop:prod-web"]
	var cm map[string]any
	for id, a := range byID {
		if strings.HasPrefix(id, "v1:ConfigMap:shop:prod-settings-") {
			cm = a
		}
	}
	if dep == nil || svc == nil || cm == nil || len(byID) != 3 {
		t.Fatalf("rendered IDs: %v", spec.Resources)
	}
	if r := dep["spec"].(map[string]any)["replicas"]; r != int64(3) {
		t.Errorf("strategic merge patch: replicas = %v (%T)", r, r)
	}
	c := dep["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["image"] != "example.com/web:v2" || len(c["env"].([]any)) != 1 {
		t.Errorf("strategic merge patch: container = %v", c)
	}
	if p := svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]; p != int64(8080) {
		t.Errorf("JSON 6902 patch: port = %v", p)
	}
	data := cm["data"].(map[string]any)
	if data["LEVEL"] != "info" || data["app.properties"] != "color=blue\n" {
		t.Errorf("configMapGenerator data = %v", data)
	}
}

// TestKustomizeRemoteRefused: remote resources, at the top or in a local base,
// are refused before kustomize runs, naming the kustomization file, the field
// and the entry.
func TestKustomizeRemoteRefused(t *testing.T) {
	for dir, want := range map[string][]string{
		"remote": {filepath.Join("testdata", "kustomize", "remote", "kustomization.yaml") + `: resources entry "https://github.com/example/app//deploy?ref=v1.0.0" is remote: kumo renders kustomizations offline`},
		"remote-nested": {
			filepath.Join("testdata", "kustomize", "remote-nested", "local", "kustomization.yaml") + `: resources entry "git@github.com:example/app.git/deploy" is remote`,
			`patches.path entry "https://example.com/patch.yaml" is remote`,
		},
	} {
		_, err := Kustomize(filepath.Join("testdata", "kustomize", dir))
		if err == nil {
			t.Errorf("%s: rendered", dir)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", dir, w, err)
			}
		}
	}
	if _, err := Kustomize(filepath.Join("testdata", "kustomize")); err == nil || !strings.Contains(err.Error(), "no kustomization file (kustomization.yaml, kustomization.yml, Kustomization)") {
		t.Errorf("a directory without a kustomization: %v", err)
	}
}

func TestIsRemote(t *testing.T) {
	for entry, want := range map[string]bool{
		"../base": false, "deployment.yaml": false, "github.com/org/repo//deploy?ref=v1": true,
		"GitHub.com:org/repo": true, "git@gitlab.com:org/repo.git": true, "git::https://example.com/r.git": true,
		"ssh://git@example.com/r.git": true, "file:///srv/repo.git": true, "http://example.com/cm.yaml": true,
		"a: b\nc: d": false, "": false, "configs/user@host.yaml": false,
	} {
		if got := isRemote(entry); got != want {
			t.Errorf("isRemote(%q) = %v, want %v", entry, got, want)
		}
	}
}
