package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kustomizeTree copies engine/input's Kustomize test data (a base and an
// overlay with a strategic-merge patch, a JSON 6902 patch and a
// configMapGenerator; kustomizations with remote bases) into a new directory,
// with the overlay's namespace set to ns, and returns that directory.
func kustomizeTree(t *testing.T, ns string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "engine", "input", "testdata", "kustomize"))); err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "overlay", "kustomization.yaml")
	data, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k, []byte(strings.Replace(string(data), "namespace: shop", "namespace: "+ns, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestApplyKustomize: kumo apply -k renders an overlay (a base, both kinds of
// patches, a generated ConfigMap) and applies it on the apiserver; -f on the
// same directory renders it too and says so; the re-preview is clean; a remote
// base is refused before anything runs, naming the file and the entry.
func TestApplyKustomize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	dir := kustomizeTree(t, ns)
	overlay := filepath.Join(dir, "overlay")

	conv := e.ok("spec", "convert", "-k", overlay).stdout
	for _, id := range []string{"apps/v1:Deployment:" + ns + ":prod-web", "v1:Service:" + ns + ":prod-web", "v1:ConfigMap:" + ns + ":prod-settings-"} {
		if !strings.Contains(conv, "- id: "+id) {
			t.Errorf("spec convert -k lacks %s:\n%s", id, conv)
		}
	}

	ctx := context.Background()
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.ok("apply", "--yes", "-k", overlay)
	dep, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "prod-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 3 || dep.Spec.Template.Spec.Containers[0].Image != "example.com/web:v2" {
		t.Errorf("strategic merge patch not applied: replicas %d, image %s", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	svc, err := e.kube.CoreV1().Services(ns).Get(ctx, "prod-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("JSON 6902 patch not applied: port %d", svc.Spec.Ports[0].Port)
	}
	cms, err := e.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "prod-settings-") {
			found = cm.Data["LEVEL"] == "info" && cm.Data["app.properties"] == "color=blue\n"
		}
	}
	if !found {
		t.Errorf("generated ConfigMap missing or wrong: %+v", cms.Items)
	}
	if rels := e.releases(); len(rels) != 1 || rels[0].Resources != 3 {
		t.Errorf("releases = %+v, want one with 3 resources", rels)
	}

	// -f on a kustomization directory renders it the same way, and says so.
	r := e.ok("preview", "-f", overlay, "-o", "json")
	if !strings.Contains(r.stderr, overlay+" holds kustomization.yaml: rendering it with kustomize, as -k "+overlay+" does.") {
		t.Errorf("preview -f DIR with a kustomization does not say it renders it:\n%s", r.stderr)
	}
	changes := parseChanges(t, r.stdout)
	if len(changes) != 3 {
		t.Errorf("preview has %d changes, want 3", len(changes))
	}
	for _, c := range changes {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", c.ID, c.Action, c.Fields)
		}
	}

	e.fails([]string{"apply", "--yes", "-k", filepath.Join(dir, "remote")},
		filepath.Join(dir, "remote", "kustomization.yaml")+`: resources entry "https://github.com/example/app//deploy?ref=v1.0.0" is remote: kumo renders kustomizations offline, from the local filesystem only`)
	e.fails([]string{"preview", "-f", filepath.Join(dir, "remote-nested")},
		filepath.Join(dir, "remote-nested", "local", "kustomization.yaml")+`: resources entry "git@github.com:example/app.git/deploy" is remote`)
	e.fails([]string{"apply", "--yes", "-k", overlay, "-f", overlay}, "give one of -f/--spec-file, -k/--kustomize or --chart")
	if rels := e.releases(); len(rels) != 1 {
		t.Errorf("a refused input recorded a release: %+v", rels)
	}
}
