package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/hydratest"
	"github.com/kumoproj/kumo/internal/tlstest"
)

// TestBearerTokenRoles: on a shared kumo server (the operator's certificate,
// a policy, --kumo-tokens), a client whose kumo token is granted viewer
// lists runs and is refused an apply, by name, action and place; the
// client certificate it dials with carries no role of its own; once the
// token is revoked the same client is refused.
func TestBearerTokenRoles(t *testing.T) {
	t.Parallel()
	e := &env{t: t, home: t.TempDir(), project: "shop"}
	tok := strings.TrimSpace(e.runNoCluster("token", "create", "--subject", "ci-viewer", "--ttl", "1h").stdout)
	if !strings.HasPrefix(tok, "kumo_") {
		t.Fatalf("token create printed %q", tok)
	}
	out, client, spec := e.sharedServer(`["token:ci-viewer"]`, "--kumo-tokens")

	if r := client.runNoCluster("run", "list"); r.code == 0 || !strings.Contains(r.stderr, "ci-runner") {
		t.Errorf("run list with only the certificate (no role): want a refusal naming ci-runner: %s", r)
	}
	client.environ = []string{"KUMO_TOKEN=" + tok}
	if r := client.runNoCluster("run", "list"); r.code != 0 {
		t.Errorf("run list with the viewer's token: %s", r)
	}
	r := client.runNoCluster("apply", "-f", spec, "--yes")
	if r.code == 0 || !strings.Contains(r.stderr, "token:ci-viewer may not apply shop/default") {
		t.Errorf("apply with the viewer's token: want a refusal naming token:ci-viewer, apply and shop/default: %s", r)
	}
	if strings.Contains(r.stderr, tok) || strings.Contains(out.String(), tok) {
		t.Error("the token appears in the client's or the server's output")
	}

	var id string
	for _, line := range strings.Split(e.runNoCluster("token", "list").stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "ci-viewer" {
			id = f[0]
		}
	}
	if r := e.runNoCluster("token", "revoke", id); r.code != 0 {
		t.Fatalf("token revoke: %s", r)
	}
	if r := client.runNoCluster("run", "list"); r.code == 0 || !strings.Contains(r.stderr, "revoked") {
		t.Errorf("run list with the revoked token: want a refusal saying revoked: %s", r)
	}
}

// TestOIDCTokenRoles: on a shared kumo server with --oidc-issuer (a real
// ory/hydra), a user whose ID token puts her in a group granted viewer lists
// runs and is refused an apply under her own name; another client's ID
// token is refused.
func TestOIDCTokenRoles(t *testing.T) {
	t.Parallel()
	idp := hydratest.Start(t)
	app, other := idp.NewClient(t), idp.NewClient(t)
	e := &env{t: t, home: t.TempDir(), project: "shop"}
	_, client, spec := e.sharedServer(`["group:shop-viewers"]`, "--oidc-issuer", idp.Issuer, "--oidc-client-id", app.ID)
	alice := hydratest.User{Subject: "alice", Groups: []string{"shop-viewers"}}

	client.environ = []string{"KUMO_TOKEN=" + idp.Login(t, app, alice).IDToken}
	if r := client.runNoCluster("run", "list"); r.code != 0 {
		t.Errorf("run list with alice's ID token: %s", r)
	}
	if r := client.runNoCluster("apply", "-f", spec, "--yes"); r.code == 0 || !strings.Contains(r.stderr, "alice may not apply shop/default") {
		t.Errorf("apply with alice's ID token: want a refusal naming alice, apply and shop/default: %s", r)
	}
	client.environ = []string{"KUMO_TOKEN=" + idp.Login(t, other, alice).IDToken}
	if r := client.runNoCluster("run", "list"); r.code == 0 || !strings.Contains(r.stderr, "wrong audience") {
		t.Errorf("run list with another client's ID token: want a refusal saying wrong audience: %s", r)
	}
}

// sharedServer starts kumo server on e's home as an operator shares it: the
// operator's certificate, a policy granting viewer on shop/* to subjects (a
// YAML list), and the bearer flags given. It returns the server's output, a
// client on another home that dials it with a certificate of the operator's
// CA that no policy names, and a spec file.
func (e *env) sharedServer(subjects string, bearerFlags ...string) (*lockedBuffer, *env, string) {
	t := e.t
	t.Helper()
	address := freeAddress(t)
	ca := tlstest.NewCA(t, "operator")
	srvPair, runner := ca.Issue(t, "frontend"), ca.Issue(t, "ci-runner")
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("grants:\n  - role: viewer\n    subjects: "+subjects+"\n    scopes: [\"shop/*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := e.serverRecorded(append([]string{"server", "--address", address, "--headless", "--policy", policy,
		"--tls-cert", srvPair.CertFile, "--tls-key", srvPair.KeyFile, "--tls-client-ca", ca.CertFile}, bearerFlags...)...)
	client := &env{t: t, home: t.TempDir(), project: "shop", flags: []string{
		"--temporal-address", address, "--tls-cert-path", runner.CertFile, "--tls-key-path", runner.KeyFile,
		"--tls-ca-path", ca.CertFile, "--tls-server-name", "localhost",
		// The server's payload key, as a fleet shares it.
		"--codec-key-file", filepath.Join(e.home, "codec.keys"),
	}}
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("resources:\n  - id: v1:ConfigMap:default:c\n    type: Kubernetes\n    attributes:\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c, namespace: default}\n      data: {a: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return out, client, spec
}
