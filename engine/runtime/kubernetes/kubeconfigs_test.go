package kubernetes

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// writeKubeconfig writes a kubeconfig for server whose user authenticates
// with user (a YAML mapping) and returns its path.
func writeKubeconfig(t *testing.T, server, user string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: %s
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server, user)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// execKubeconfig writes a kubeconfig whose user's exec credential plugin
// creates marker when it runs, and returns its path.
func execKubeconfig(t *testing.T, server, marker string) string {
	t.Helper()
	plugin := filepath.Join(t.TempDir(), "plugin.sh")
	script := "#!/bin/sh\ntouch " + marker + "\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'` + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return writeKubeconfig(t, server, fmt.Sprintf("{exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}", plugin))
}

// A resource's kubeConfig extension naming a kubeconfig the workspace does not
// list is refused, naming the resource, the value and the workspace setting,
// before any runtime for it is built (no connection, no plugin).
func TestKubeConfigExtensionForeignRefused(t *testing.T) {
	own := writeKubeconfig(t, "https://127.0.0.1:1", "{token: own}")
	listed := writeKubeconfig(t, "https://127.0.0.1:2", "{token: listed}")
	marker := filepath.Join(t.TempDir(), "ran")
	foreign := execKubeconfig(t, "https://127.0.0.1:3", marker)
	rt, err := New(Config{Kubeconfig: own, Kubeconfigs: map[string]string{"edge": listed}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{foreign, "prod", filepath.Dir(listed)} {
		cm := configMap("default", "x", map[string]any{"k": "v"})
		cm.Extensions = map[string]any{engine.ExtKubeConfig: v}
		_, err := rt.Apply(context.Background(), cm, runtime.ApplyOptions{})
		if err == nil || !runtime.IsPermanent(err) {
			t.Fatalf("%q: err = %v, want a permanent refusal", v, err)
		}
		for _, want := range []string{cm.ID, fmt.Sprintf("%q", v), "runtimes.kubernetes.kubeconfigs"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: error %q does not name %s", v, err, want)
			}
		}
		if _, err := rt.Read(context.Background(), cm); err == nil || !strings.Contains(err.Error(), "runtimes.kubernetes.kubeconfigs") {
			t.Errorf("%q: Read err = %v, want the refusal", v, err)
		}
	}
	if len(rt.others) != 0 {
		t.Errorf("runtimes built for refused kubeconfigs: %v", rt.others)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the foreign kubeconfig's exec plugin ran")
	}
	// Listed: by name, by path and by the runtime's own path, the resource
	// goes to that cluster's runtime.
	for v, want := range map[string]string{"edge": listed, listed: listed, own: own} {
		cm := configMap("default", "x", nil)
		cm.Extensions = map[string]any{engine.ExtKubeConfig: v}
		got, err := rt.forResource(cm)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if got.kubeconfig != want {
			t.Errorf("%q: runtime of %q, want %q", v, got.kubeconfig, want)
		}
	}
}

// A kubeconfig whose user runs an exec credential plugin is refused when it is
// loaded, naming the file, the user and the setting, and the plugin never
// runs; with AllowExecPlugins it is used and the plugin runs at the first
// request. Token kubeconfigs need no setting.
func TestExecPluginNeedsAllow(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"30","gitVersion":"v1.30.0"}`)
	}))
	defer srv.Close()
	marker := filepath.Join(t.TempDir(), "ran")
	path := execKubeconfig(t, srv.URL, marker)
	for _, err := range []error{
		func() error { _, err := New(Config{Kubeconfig: path}); return err }(),
		func() error {
			rt, err := New(Config{Kubeconfig: writeKubeconfig(t, srv.URL, "{token: t}"), Kubeconfigs: map[string]string{"edge": path}})
			if err != nil {
				return fmt.Errorf("token kubeconfig: %w", err)
			}
			cm := configMap("default", "x", nil)
			cm.Extensions = map[string]any{engine.ExtKubeConfig: "edge"}
			_, err = rt.Read(context.Background(), cm)
			return err
		}(),
	} {
		if err == nil {
			t.Fatal("exec plugin kubeconfig accepted without allowExecPlugins")
		}
		for _, want := range []string{path, `user "u"`, "runtimes.kubernetes.allowExecPlugins"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the exec plugin ran although refused")
	}
	rt, err := New(Config{Kubeconfig: path, AllowExecPlugins: true})
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if err := rt.rest.Get().AbsPath("/version").Do(context.Background()).Error(); err != nil {
		t.Fatalf("request with the allowed plugin: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the allowed exec plugin did not run: %v", err)
	}
}
