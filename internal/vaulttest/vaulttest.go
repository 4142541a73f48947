// Package vaulttest runs a real HashiCorp Vault server for tests: `vault
// server -dev` on 127.0.0.1 (in memory, unsealed, KV v2 mounted at secret/,
// a root token the test chooses). The binary is built from the Go module
// proxy by `hack/build-tools.sh vault` (its wrapper module hack/tools/vault)
// and cached by version with the other tools.
//
//	v := vaulttest.Start(t)
//	v.Put(t, "secret", "apps/web/db", map[string]any{"password": "s3cret"})
//	// v.Addr, v.Token: VAULT_ADDR and VAULT_TOKEN for a client.
package vaulttest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/internal/testproc"
)

// Version is the version hack/build-tools.sh builds (a test keeps them in
// sync).
const Version = "v1.21.0"

// Binary returns the path of the Vault binary, building it with
// hack/build-tools.sh if it is not cached yet.
func Binary() (string, error) {
	dir := localcluster.DefaultBinDir()
	path := filepath.Join(dir, "vault-"+Version)
	return path, localcluster.EnsureTools(dir, map[string]string{"vault": path})
}

// binaryFor finds the binary for t: one already built is used, even with
// -short (it starts in about a second). A missing one is built (Vault is the
// largest tool kumo's tests run, several CPU-minutes cold), except with -short
// outside CI, where the test is skipped saying how to build it; in CI
// (CI=true) a failed build fails the test, never skips it.
func binaryFor(t testing.TB) string {
	t.Helper()
	path := filepath.Join(localcluster.DefaultBinDir(), "vault-"+Version)
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		return path
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skipf("needs HashiCorp Vault %s, not built at %s (hack/build-tools.sh vault builds it, several minutes cold); skipped with -short", Version, path)
	}
	path, err := Binary()
	if err != nil {
		t.Fatalf("vaulttest: %v", err)
	}
	return path
}

// Server is a running Vault dev server.
type Server struct {
	// Addr is its address, "http://127.0.0.1:<port>".
	Addr string
	// Token is its root token.
	Token string

	proc *testproc.Process
}

// Start starts Vault for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binaryFor(t)
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	s := &Server{Addr: "http://" + listen, Token: "root-" + hex.EncodeToString(tok)}
	cmd := exec.Command(bin, "server", "-dev", "-dev-no-store-token",
		"-dev-root-token-id="+s.Token, "-dev-listen-address="+listen)
	// HOME is the test's: the dev server writes nothing there with
	// -dev-no-store-token, and reads no user configuration.
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "VAULT_LOG_LEVEL=warn", "SKIP_SETCAP=1"}
	s.proc = testproc.Start(t, "vault", dir, cmd)
	// The dev server is ready once it is unsealed and active (200), and its
	// secret/ mount answers.
	s.proc.WaitReady(t, func() bool {
		code, _ := s.do(http.MethodGet, "/v1/sys/health", nil)
		if code != http.StatusOK {
			return false
		}
		code, _ = s.do(http.MethodGet, "/v1/sys/mounts/secret", nil)
		return code == http.StatusOK
	})
	return s
}

// Put writes data as a new version of the KV v2 secret at path in mount
// ("secret", "apps/web/db") and returns that version's number.
func (s *Server) Put(t testing.TB, mount, path string, data map[string]any) int {
	t.Helper()
	code, body := s.do(http.MethodPost, "/v1/"+mount+"/data/"+path, map[string]any{"data": data})
	if code != http.StatusOK {
		t.Fatalf("vaulttest: put %s/%s: %d %s", mount, path, code, body)
	}
	var out struct {
		Data struct {
			Version int `json:"version"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("vaulttest: put %s/%s: %v", mount, path, err)
	}
	return out.Data.Version
}

// MountKV1 mounts a KV version 1 engine at path.
func (s *Server) MountKV1(t testing.TB, path string) {
	t.Helper()
	if code, body := s.do(http.MethodPost, "/v1/sys/mounts/"+path, map[string]any{"type": "kv", "options": map[string]any{"version": "1"}}); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("vaulttest: mount %s: %d %s", path, code, body)
	}
}

// PutV1 writes data at path of a KV v1 mount.
func (s *Server) PutV1(t testing.TB, mount, path string, data map[string]any) {
	t.Helper()
	if code, body := s.do(http.MethodPost, "/v1/"+mount+"/"+path, data); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("vaulttest: put %s/%s: %d %s", mount, path, code, body)
	}
}

// ReadToken creates a token with a policy that may read only the given KV v2
// paths of mount ("secret", "apps/web/*") and returns it.
func (s *Server) ReadToken(t testing.TB, mount string, paths ...string) string {
	t.Helper()
	var policy bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&policy, "path %q { capabilities = [\"read\"] }\n", mount+"/data/"+p)
	}
	name := "read-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if code, body := s.do(http.MethodPut, "/v1/sys/policies/acl/"+name, map[string]any{"policy": policy.String()}); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("vaulttest: policy: %d %s", code, body)
	}
	code, body := s.do(http.MethodPost, "/v1/auth/token/create", map[string]any{"policies": []string{name}, "no_default_policy": true, "ttl": "1h"})
	if code != http.StatusOK {
		t.Fatalf("vaulttest: token: %d %s", code, body)
	}
	var out struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Auth.ClientToken == "" {
		t.Fatalf("vaulttest: token: %v %s", err, body)
	}
	return out.Auth.ClientToken
}

func (s *Server) do(method, path string, in any) (int, []byte) {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.Addr+path, body)
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("X-Vault-Token", s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
