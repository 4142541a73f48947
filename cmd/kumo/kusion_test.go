package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/internal/terraformtest"
)

// kusionSpec is a Spec as Kusion writes it: Go-serialised objects (nulls, empty
// structs), GVK and is-workload extensions, a $kusion_path reference without
// dependsOn, resources out of order, a ClusterRole under a 4-part ID, an
// unknown extension, secretStore null and a context.
func kusionSpec(ns string) string {
	return fmt.Sprintf(`resources:
- id: apps/v1:Deployment:%[1]s:web
  type: Kubernetes
  attributes:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {creationTimestamp: null, name: web, namespace: %[1]s, labels: {app: web}}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      strategy: {}
      template:
        metadata: {creationTimestamp: null, labels: {app: web}}
        spec:
          containers:
          - name: web
            image: nginx:1.27
            resources: {}
            env:
            - {name: SETTINGS, value: $kusion_path.v1:ConfigMap:%[1]s:settings.metadata.uid}
    status: {}
  dependsOn: [v1:Namespace:%[1]s]
  extensions:
    GVK: apps/v1, Kind=Deployment
    kusion.io/is-workload: true
    example.com/team: shop
- id: v1:ConfigMap:%[1]s:settings
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {creationTimestamp: null, name: settings, namespace: %[1]s}
    data: {mode: dev}
  dependsOn: [v1:Namespace:%[1]s]
  extensions: {GVK: "/v1, Kind=ConfigMap"}
- id: rbac.authorization.k8s.io/v1:ClusterRole:default:%[1]s-reader
  type: Kubernetes
  attributes:
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: {creationTimestamp: null, name: %[1]s-reader, namespace: default}
    rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
  extensions: {GVK: "rbac.authorization.k8s.io/v1, Kind=ClusterRole", kusion.io/is-workload: "false"}
- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: Namespace
    metadata: {creationTimestamp: null, name: %[1]s}
    spec: {}
    status: {}
  extensions: {GVK: "/v1, Kind=Namespace"}
secretStore: null
context: {owner: platform-team}
`, ns)
}

// TestApplyKusionSpec: a Spec as Kusion writes it applies (the reference
// resolved, the ClusterRole cluster-scoped), its context and extensions are kept
// in the release, and a re-preview right after shows nothing to change.
func TestApplyKusionSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	spec := e.writeSpec("kusion.yaml", kusionSpec(ns))
	e.ok("apply", "--yes", "-f", spec)
	ctx := context.Background()
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := e.kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Env[0].Value; got != string(cm.UID) {
		t.Errorf("$kusion_path reference resolved to %q, want the ConfigMap's uid %q", got, cm.UID)
	}
	if _, err := e.kube.RbacV1().ClusterRoles().Get(ctx, ns+"-reader", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRole with a 4-part ID: %v", err)
	}
	rel := e.ok("release", "show").stdout
	for _, want := range []string{"owner: platform-team", "example.com/team: shop", "kusion.io/is-workload: true"} {
		if !strings.Contains(rel, want) {
			t.Errorf("release show lacks %q", want)
		}
	}
	for id, c := range e.preview(spec) {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", id, c.Action, c.Fields)
		}
	}
	e.ok("destroy", "--yes")
}

// TestApplyKusionMixedSpec: Terraform and Kubernetes resources ordered by
// $kusion_path references alone, one inside a Terraform argument, one in a
// ConfigMap taking a Terraform output; a re-preview shows nothing to change.
func TestApplyKusionMixedSpec(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	ns := e.ns
	dir := t.TempDir()
	spec := e.writeSpec("mixed.yaml", fmt.Sprintf(`resources:
- id: v1:ConfigMap:%[1]s:conf
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {creationTimestamp: null, name: conf, namespace: %[1]s}
    data:
      path: $kusion_path.hashicorp:local:local_file:conf.filename
      content: $kusion_path.hashicorp:local:local_file:conf.content
  dependsOn: [v1:Namespace:%[1]s]
  extensions: {GVK: "/v1, Kind=ConfigMap"}
- id: hashicorp:local:local_file:conf
  type: Terraform
  attributes:
    filename: %[2]s
    content: $kusion_path.builtin:terraform:terraform_data:seed.output
  extensions: {provider: %[3]s, providerMeta: {}, resourceType: local_file}
- id: builtin:terraform:terraform_data:seed
  type: Terraform
  attributes: {input: seed-%[1]s}
  extensions: {provider: terraform.io/builtin/terraform, resourceType: terraform_data}
- id: v1:Namespace:%[1]s
  type: Kubernetes
  attributes: {apiVersion: v1, kind: Namespace, metadata: {name: %[1]s}}
secretStore: null
context: {}
`, ns, filepath.Join(dir, "conf"), terraformtest.LocalProvider))
	e.ok("apply", "--yes", "-f", spec)
	data, err := os.ReadFile(filepath.Join(dir, "conf"))
	if err != nil || string(data) != "seed-"+ns {
		t.Fatalf("local_file content = %q, %v; want the terraform_data output", data, err)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), "conf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["path"] != filepath.Join(dir, "conf") || cm.Data["content"] != "seed-"+ns {
		t.Errorf("ConfigMap data = %v", cm.Data)
	}
	for id, c := range e.preview(spec) {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", id, c.Action, c.Fields)
		}
	}
	e.ok("destroy", "--yes")
	if _, err := os.Stat(filepath.Join(dir, "conf")); !os.IsNotExist(err) {
		t.Errorf("file after destroy: %v", err)
	}
}

// A Kusion spec whose Secret refers to a secret store, in a workspace that
// configures none, is refused by `kumo preview -f` and `apply`, naming the
// resource, the field and the workspace, and nothing reaches the cluster: the
// spec's own secretStore is never used (a spec cannot choose where the
// worker's credentials go), and the reference is never applied as the value.
func TestKusionSecretStoreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("spec.yaml", fmt.Sprintf(`resources:
- id: v1:Secret:%[1]s:db
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[1]s}
    stringData: {password: "ref://prod/db/password"}
  extensions: {GVK: "/v1, Kind=Secret"}
secretStore:
  provider:
    aws: {region: us-east-1}
`, e.ns))
	for _, args := range [][]string{{"preview", "-f", spec}, {"apply", "--yes", "-f", spec}} {
		e.fails(args,
			"v1:Secret:"+e.ns+":db: stringData.password: ref://prod/db/password: workspace default has no secretStore",
			"a spec cannot bring its own")
	}
	if _, err := e.kube.CoreV1().Secrets(e.ns).Get(context.Background(), "db", metav1.GetOptions{}); err == nil {
		t.Error("the Secret was created")
	}
}
