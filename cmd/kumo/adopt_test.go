package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Objects another field manager created are adopted when the spec matches
// them, and taken over on a conflicting field only with --force-conflicts:
// without it the run fails naming the field and the manager, changing nothing.
func TestAdoptAndForceConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"same", "other"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Data: map[string]string{"a": "1"}}
		if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: "test-client"}); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  a: %q\n", name, e.ns, value)
	}
	same := "v1:ConfigMap:" + e.ns + ":same"
	other := "v1:ConfigMap:" + e.ns + ":other"
	both := e.writeSpec("both.yaml", manifest("same", "1")+"---\n"+manifest("other", "2"))

	// Identical to the spec: adopt, named as not created by kumo.
	r := e.ok("preview", "-f", e.writeSpec("same.yaml", manifest("same", "1")))
	if !strings.Contains(r.stdout, "Adopt      "+same+"  (taking over from test-client)") ||
		!strings.Contains(r.stdout, "1 to adopt, 0 unchanged") {
		t.Errorf("preview of an identical object made by another manager:\n%s", r)
	}

	// A conflicting field: refused, naming the field and the manager; nothing applied.
	e.fails([]string{"apply", "--yes", "-f", both}, ".data.a", `conflict with "test-client"`, "--force-conflicts")
	if cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, "other", metav1.GetOptions{}); err != nil || cm.Data["a"] != "1" {
		t.Fatalf("after the refused apply: %v, %v; want data.a still 1", cm, err)
	}

	// With --force-conflicts the preview says whose object it takes over...
	r = e.ok("preview", "--force-conflicts", "-f", both)
	if !strings.Contains(r.stdout, "Update     "+other+"  (taking over from test-client)") ||
		!strings.Contains(r.stdout, `data.a: "1" -> "2"`) {
		t.Errorf("preview --force-conflicts:\n%s", r)
	}
	// ... and the apply takes it.
	r = e.ok("apply", "--yes", "--force-conflicts", "-f", both)
	if !strings.Contains(r.stdout, "1 updated, 0 deleted, 1 adopted") {
		t.Errorf("apply --force-conflicts summary:\n%s", r)
	}
	for name, want := range map[string]string{"same": "1", "other": "2"} {
		cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var managers []string
		for _, f := range cm.ManagedFields {
			managers = append(managers, f.Manager)
		}
		if cm.Data["a"] != want || !slices.Contains(managers, "kumo") {
			t.Errorf("%s after the takeover: data %v, managers %v; want a=%s managed by kumo", name, cm.Data, managers, want)
		}
	}
	// Both are kumo's now: nothing left to take over.
	if r = e.ok("preview", "-f", both); !strings.Contains(r.stdout, "No changes") {
		t.Errorf("preview after the takeover:\n%s", r)
	}
}
