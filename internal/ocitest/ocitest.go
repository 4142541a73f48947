// Package ocitest runs an OCI registry for tests: go-containerregistry's
// in-process registry on a loopback port, behind HTTP basic auth, with a
// Docker config directory holding its credentials (point $DOCKER_CONFIG at
// it), and pushes Helm charts to it with Helm's registry client.
package ocitest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmregistry "helm.sh/helm/v3/pkg/registry"
)

// Registry is a running test registry.
type Registry struct {
	// Host is host:port on 127.0.0.1.
	Host           string
	User, Password string
	// DockerConfig is a directory with a config.json holding Host's
	// credentials, as docker login writes it.
	DockerConfig string
}

// Start starts a registry that the test's cleanup stops.
func Start(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{User: "kumo", Password: "s3cret-" + strings.ReplaceAll(t.Name(), "/", "-")}
	regs := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != r.User || p != r.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		regs.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	r.DockerConfig = t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password))
	cfg, err := json.Marshal(map[string]any{"auths": map[string]any{r.Host: map[string]string{"auth": auth}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.DockerConfig, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// PushChart packages the chart in dir and pushes it as
// Host/repository/<name>:<version>, and returns its oci:// reference.
func (r *Registry) PushChart(t testing.TB, dir, repository string) string {
	t.Helper()
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	c, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptBasicAuth(r.User, r.Password),
		helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "helm-registry.json")))
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Host + "/" + repository + "/" + ch.Name() + ":" + ch.Metadata.Version
	if _, err := c.Push(data, ref); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return "oci://" + ref
}
