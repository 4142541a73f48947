package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/internal/vaulttest"
)

// vaultSecretSpec is a Secret whose values are Kusion references, one in
// data base64-encoded as Kusion writes it and one in stringData, plus a
// ConfigMap named cm; store is the spec's secretStore (as Kusion copies the
// workspace's into the spec), or "" for none.
func vaultSecretSpec(ns, dataRef, stringRef, cm, store string) string {
	s := "resources:\n" + namespace(ns) + fmt.Sprintf(`- id: v1:Secret:%[1]s:db
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[1]s}
    data: {password: %[2]s}
    stringData: {user: %[3]q}
- id: v1:ConfigMap:%[1]s:%[4]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %[4]s, namespace: %[1]s}
    data: {k: v}
`, ns, base64.StdEncoding.EncodeToString([]byte(dataRef)), stringRef, cm)
	if store != "" {
		s += "secretStore:\n  provider:\n    vault: " + store + "\n"
	}
	return s
}

// TestSecretStoreVault is issue 29's secret-store test against a real Vault
// (dev server on loopback, KV v2): a spec whose Secret values are ref://
// references is previewed (masked) and applied through kumo server; the
// cluster holds the values read from Vault; a new version in Vault is an
// Update at the next preview and apply; a drift check right after is in
// sync. A missing property, a secret the workspace does not allow and a
// spec naming another Vault fail before anything is applied, naming the
// resource, the field and the store. No value read from Vault (nor its
// base64) is in any Temporal history, payload, file under KUMO_HOME
// (releases, state, run logs, the embedded database) or command output.
func TestSecretStoreVault(t *testing.T) {
	t.Parallel()
	v := vaulttest.Start(t)
	pw, pw2, user := marker(t, "vault-password"), marker(t, "vault-password2"), marker(t, "vault-user")
	forbidden := marker(t, "vault-forbidden")
	v.Put(t, "secret", "apps/demo/db", map[string]any{"password": pw, "user": user})
	v.Put(t, "secret", "other/db", map[string]any{"password": forbidden})
	secrets := []string{pw, pw2, user, forbidden}
	for _, s := range secrets[:] {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s)))
	}

	e := newEnv(t)
	// The worker's credential: a token that may read both secrets, so that
	// only the workspace's allowedNames keep other/db out.
	e.environ = append(e.environ, "VAULT_TOKEN="+v.ReadToken(t, "secret", "apps/*", "other/*"), "KUMO_WORKSPACE=dev")
	store := fmt.Sprintf("{server: %q, path: secret, version: v2}", v.Addr)
	e.ok("workspace", "create", "dev", "--file", e.writeSpec("dev.yaml", fmt.Sprintf(`secretStore:
  provider:
    vault: %s
  allowedNames: [secret/apps/demo/*]
`, store)))
	srv := e.startServer()

	var outputs []result
	run := func(args ...string) result {
		t.Helper()
		r := e.ok(args...)
		outputs = append(outputs, r)
		return r
	}
	fails := func(args []string, want ...string) {
		t.Helper()
		outputs = append(outputs, e.fails(args, want...))
	}
	ns := e.ns
	spec := e.writeSpec("v1.yaml", vaultSecretSpec(ns, "ref://secret/apps/demo/db/password", "ref://apps/demo/db/user", "cm1", store))
	preview := run("preview", "--workspace", "dev", "-f", spec, "-o", "json")
	var p struct{ Changes []change }
	if err := json.Unmarshal([]byte(preview.stdout), &p); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range p.Changes {
		if c.ID == "v1:Secret:"+ns+":db" {
			found = c.Action == "Create"
		}
	}
	if !found {
		t.Errorf("the preview does not create the Secret: %s", preview.stdout)
	}
	run("apply", "--yes", "--workspace", "dev", "-f", spec)
	ctx := context.Background()
	live, err := e.kube.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(live.Data["password"]) != pw || string(live.Data["user"]) != user {
		t.Fatalf("the cluster's Secret holds %q, %q; want the values in Vault", live.Data["password"], live.Data["user"])
	}
	if rep := e.driftCheck(0); rep.Counts.Drifted != 0 || rep.Counts.InSync != 3 {
		t.Errorf("drift check right after the apply: %+v", rep.Counts)
	}

	// A new version in Vault: the preview shows the Secret's change, masked.
	v.Put(t, "secret", "apps/demo/db", map[string]any{"password": pw2, "user": user})
	preview = run("preview", "--workspace", "dev", "-f", spec, "-o", "json")
	p.Changes = nil
	if err := json.Unmarshal([]byte(preview.stdout), &p); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, c := range p.Changes {
		if c.ID != "v1:Secret:"+ns+":db" {
			continue
		}
		if c.Action != "Update" {
			t.Errorf("the Secret previews as %s after a new version in Vault", c.Action)
		}
		for _, f := range c.Fields {
			if f.Before != "(sensitive)" || f.After != "(sensitive)" {
				t.Errorf("preview of the Secret: %s: %v -> %v", f.Path, f.Before, f.After)
			}
			fields = append(fields, f.Path)
		}
	}
	if strings.Join(fields, ",") != "data.password" {
		t.Errorf("the preview after a new version lists %v, want data.password (masked)", fields)
	}
	run("apply", "--yes", "--workspace", "dev", "-f", spec)
	live, err = e.kube.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(live.Data["password"]) != pw2 {
		t.Fatalf("after the second apply the Secret holds %q (%v), want Vault's new version", live.Data["password"], err)
	}
	if rep := e.driftCheck(0); rep.Counts.Drifted != 0 {
		t.Errorf("drift check after the second apply: %+v", rep.Counts)
	}

	// Refused before anything is applied: the ConfigMap cm2 of each spec
	// is never created, and the Secret keeps its value.
	where := fmt.Sprintf("v1:Secret:%s:db: stringData.user:", ns)
	storeName := fmt.Sprintf("(secret store vault %s (mount secret, kv v2))", v.Addr)
	for _, c := range []struct {
		ref, store string
		want       []string
	}{
		{"ref://apps/demo/db/nope", store, []string{where + " ref://apps/demo/db/nope " + storeName + `: the secret has no property "nope"`}},
		{"ref://apps/demo/missing/x", store, []string{where + " ref://apps/demo/missing/x " + storeName + ": secret secret/apps/demo/missing: not found"}},
		{"ref://other/db/password", store, []string{where + " ref://other/db/password " + storeName + `: secret "secret/other/db" is not among the names this workspace's specs may read (secretStore.allowedNames)`}},
		{"ref://apps/demo/db/user", `{server: "http://127.0.0.1:1", path: secret}`, []string{
			fmt.Sprintf("v1:Secret:%s:db: data.password: ref://secret/apps/demo/db/password: the spec's secretStore (vault http://127.0.0.1:1 (mount secret, kv v2)) is not workspace dev's", ns),
			"a spec may name its workspace's store, never another"}},
	} {
		bad := e.writeSpec("bad.yaml", vaultSecretSpec(ns, "ref://secret/apps/demo/db/password", c.ref, "cm2", c.store))
		fails([]string{"apply", "--yes", "--workspace", "dev", "-f", bad}, c.want...)
		if _, err := e.kube.CoreV1().ConfigMaps(ns).Get(ctx, "cm2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the ConfigMap of the refused spec exists (%v)", c.ref, err)
		}
	}
	live, err = e.kube.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || string(live.Data["password"]) != pw2 || string(live.Data["user"]) != user {
		t.Errorf("a refused apply changed the Secret (%v)", err)
	}

	for _, row := range e.runList() {
		run("run", "show", row.RunID, "-o", "json")
		switch row.Operation {
		case "generate", "apply", "destroy", "rollback": // the runs that keep a log
			run("run", "logs", row.RunID)
		}
	}
	run("release", "show", "-o", "json")
	run("release", "diff", "1", "2")
	// The recorded state is the Secret as applied: its data, base64.
	if r := e.ok("release", "show", "--revision", "2", "--reveal"); !strings.Contains(r.stdout, base64.StdEncoding.EncodeToString([]byte(pw2))) {
		t.Errorf("release show --reveal lacks the value read from Vault (base64 in the Secret's data):\n%s", r.stdout)
	}

	history, payloads, _ := dumpHistories(t, e.home, srv.info.Address)
	decoded := decodeThrough(t, loggedIn(t, srv.info), srv.info.CodecURL+"/default/decode", payloads)
	for _, m := range secrets {
		if bytes.Contains(history, []byte(m)) {
			t.Errorf("the Temporal history holds %s in clear", m)
		}
		if bytes.Contains(decoded, []byte(m)) {
			t.Errorf("a decoded payload holds %s", m)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, srv.wait())
	for _, r := range outputs {
		for _, m := range secrets {
			if strings.Contains(r.stdout+r.stderr, m) {
				t.Errorf("output holds %s in clear:\n%s", m, r)
			}
		}
	}
	checkStoredFiles(t, e.home, secrets)
}
