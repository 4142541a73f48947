package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// installManifest is an operator-style install: a CRD, its namespace, RBAC,
// configuration, a Service and a Deployment in one multi-document file, out of
// order, the ConfigMap without a namespace (it gets -n).
func installManifest(ns string) string {
	return fmt.Sprintf(`# an install manifest
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: operator}}
  template:
    metadata: {labels: {app: operator}}
    spec:
      serviceAccountName: operator
      containers: [{name: manager, image: example.com/operator:v1}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s.example.com}
spec:
  group: %[1]s.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: operator, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s-operator}
subjects: [{kind: ServiceAccount, name: operator, namespace: %[1]s}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s-operator}
rules: [{apiGroups: ["%[1]s.example.com"], resources: [gadgets], verbs: [get, list, watch]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: operator-config}
data: {level: info}
---
apiVersion: v1
kind: Service
metadata: {name: operator, namespace: %[1]s}
spec: {selector: {app: operator}, ports: [{port: 443, targetPort: 9443}]}
`, ns)
}

// A cluster-scoped object written with a namespace, in a subdirectory (read with -R).
func nestedClusterRole(ns string) string {
	return fmt.Sprintf(`{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
 "metadata": {"name": "%[1]s-viewer", "namespace": "default"},
 "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
`, ns)
}

// TestApplyPlainManifests: a directory of plain manifests (multi-document YAML
// with a CRD and RBAC, JSON in a subdirectory) applies with kumo apply -f in one
// run, in kind order; a re-preview shows everything unchanged; destroy removes it.
func TestApplyPlainManifests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "install.yaml"), []byte(installManifest(ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra", "viewer.json"), []byte(nestedClusterRole(ns)), 0o644); err != nil {
		t.Fatal(err)
	}

	// The converted Spec: kusion-style IDs, -n for the ConfigMap, 3-part IDs
	// for cluster-scoped kinds.
	conv := e.ok("spec", "convert", "-f", dir, "-R", "-n", ns).stdout
	for _, id := range []string{"v1:Namespace:" + ns, "v1:ConfigMap:" + ns + ":operator-config",
		"rbac.authorization.k8s.io/v1:ClusterRole:" + ns + "-operator",
		"rbac.authorization.k8s.io/v1:ClusterRole:default:" + ns + "-viewer",
		"apiextensions.k8s.io/v1:CustomResourceDefinition:gadgets." + ns + ".example.com"} {
		if !strings.Contains(conv, "- id: "+id+"\n") {
			t.Errorf("spec convert lacks %s:\n%s", id, conv)
		}
	}

	r := e.ok("apply", "--yes", "-f", dir, "-R", "-n", ns)
	if n := strings.Count(r.stderr, "is cluster-scoped"); n != 1 {
		t.Errorf("cluster-scoped warning given %d times, want once:\n%s", n, r.stderr)
	}
	ctx := context.Background()
	if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "operator-config", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap without a namespace was not applied into -n %s: %v", ns, err)
	}
	for _, name := range []string{ns + "-operator", ns + "-viewer"} {
		if _, err := e.kube.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRole %s: %v", name, err)
		}
	}
	dyn, err := dynamic.NewForConfig(e.cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Get(ctx, "gadgets."+ns+".example.com", metav1.GetOptions{}); err != nil {
		t.Errorf("CRD: %v", err)
	}
	if rels := e.releases(); len(rels) != 1 || rels[0].Resources != 9 {
		t.Errorf("releases = %+v, want one with 9 resources", rels)
	}

	// Right after apply, nothing changes.
	r = e.ok("preview", "-f", dir, "-R", "-n", ns, "-o", "json")
	changes := parseChanges(t, r.stdout)
	if len(changes) != 9 {
		t.Errorf("preview has %d changes, want 9", len(changes))
	}
	for _, c := range changes {
		if c.Action != "UnChanged" {
			t.Errorf("re-preview: %s %s %+v", c.ID, c.Action, c.Fields)
		}
	}

	e.ok("destroy", "--yes")
	if _, err := e.kube.RbacV1().ClusterRoles().Get(ctx, ns+"-viewer", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole after destroy: %v", err)
	}
	if _, err := crds.Get(ctx, "gadgets."+ns+".example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD after destroy: %v", err)
	}
}

// TestManifestInputErrors: standard input works; one object under two IDs, a
// directory without manifests and the old --namespace are refused before
// anything is written.
func TestManifestInputErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.ns
	role := func(id, nsLine string) string {
		return fmt.Sprintf(`- id: %s
  type: Kubernetes
  attributes:
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: {name: %s-dup%s}
`, id, ns, nsLine)
	}
	dup := e.writeSpec("dup.yaml", "resources:\n"+
		role("rbac.authorization.k8s.io/v1:ClusterRole:"+ns+"-dup", "")+
		role("rbac.authorization.k8s.io/v1:ClusterRole:default:"+ns+"-dup", ", namespace: default"))
	e.fails([]string{"apply", "--yes", "-f", dup},
		`resources[0] ("rbac.authorization.k8s.io/v1:ClusterRole:`+ns+`-dup") and resources[1] ("rbac.authorization.k8s.io/v1:ClusterRole:default:`+ns+`-dup") are the same object`)
	if _, err := e.kube.RbacV1().ClusterRoles().Get(context.Background(), ns+"-dup", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the duplicated ClusterRole was written: %v", err)
	}
	if rels := e.run("release", "list", "-o", "json"); strings.Contains(rels.stdout, `"revision"`) {
		t.Errorf("a release was recorded: %s", rels.stdout)
	}

	stdin := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	r := e.runInput(stdin, "preview", "-f", "-", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"v1:Namespace:`+ns+`"`) {
		t.Errorf("preview -f - : %s", r)
	}

	// Without -n, the kubeconfig context's namespace, as kubectl does.
	cfg, err := clientcmd.LoadFromFile(e.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = "from-context"
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cm := e.writeSpec("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	if r := e.ok("--kubeconfig", kubeconfig, "spec", "convert", "-f", cm); !strings.Contains(r.stdout, "id: v1:ConfigMap:from-context:c") {
		t.Errorf("spec convert without -n:\n%s", r.stdout)
	}

	// A namespace neither in the cluster nor in the spec fails the preview,
	// naming both, as the apply would; one the spec creates is planned.
	absent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: %s-absent}\n", ns)
	e.fails([]string{"preview", "-f", e.writeSpec("absent-ns.yaml", absent)},
		"v1:ConfigMap:"+ns+"-absent:c", `namespace "`+ns+`-absent" does not exist and the spec does not create it`)
	created := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s-absent}\n---\n", ns) + absent
	if r := e.ok("preview", "-f", e.writeSpec("created-ns.yaml", created), "-o", "json"); len(parseChanges(t, r.stdout)) != 2 {
		t.Errorf("preview of a namespace and a ConfigMap in it:\n%s", r.stdout)
	}

	e.fails([]string{"apply", "-f", "-"}, "add --yes")
	e.fails([]string{"apply", "--yes", "-f", t.TempDir()}, "no .yaml, .yml, .json files (-R reads subdirectories too)")
	e.fails([]string{"--namespace", "team-a", "release", "list"}, "use --temporal-namespace team-a")
	e.fails([]string{"apply", "--yes", "-n", "x", "-f", dup}, "-n/--namespace x sets the namespace of plain Kubernetes manifests", "is a Spec")
}

func parseChanges(t *testing.T, out string) []change {
	t.Helper()
	var res struct {
		Changes []change `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("preview -o json: %v\n%s", err, out)
	}
	return res.Changes
}
