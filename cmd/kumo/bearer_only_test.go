package main

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/pki"
)

// TestBearerOnlyClient: a CI job with only the server's CA and a kumo token
// (no client certificate, no kumo home of the server) reaches a `kumo server
// --kumo-tokens`: as a viewer it lists runs and is refused apply with a denial
// naming subject, action and where; without the token it is refused as
// unauthenticated. A server without bearer verifiers still refuses a client
// without a certificate at the TLS handshake.
func TestBearerOnlyClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("grants:\n  - role: viewer\n    subjects: [\"token:ci\"]\n    scopes: [\"*/*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(e.ok("token", "create", "--subject", "ci", "--ttl", "1h").stdout)
	srv := e.startServer("--headless", "--kumo-tokens", "--policy", policy)
	p, err := pki.Open(e.home, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The owner applies once, so that there is a run to list.
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))
	e.ok("apply", "--yes", "-f", spec)

	ci := e.another()
	ci.flags = []string{"--temporal-address", srv.info.Address, "--tls-ca-path", p.CAFile(),
		"--codec-key-file", filepath.Join(e.home, "codec.keys")}
	withToken := ci.another()
	withToken.flags = append(append([]string{}, ci.flags...), "--token", tok)

	rows := withToken.runList()
	if len(rows) == 0 {
		t.Fatalf("run list with a token only: no runs")
	}
	want := "token:ci may not apply " + e.project + "/default"
	withToken.fails([]string{"apply", "--yes", "-f", spec}, want)
	ci.fails([]string{"run", "list"}, "Unauthenticated", "no credential")

	// Without verifiers the frontend still requires a certificate.
	plain := e.another()
	plainSrv := plain.startServer("--headless")
	pp, err := pki.Open(plain.home, pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	noCert := plain.another()
	noCert.flags = []string{"--temporal-address", plainSrv.info.Address, "--tls-ca-path", pp.CAFile(),
		"--codec-key-file", filepath.Join(plain.home, "codec.keys"), "--token", tok}
	if r := noCert.run("run", "list"); r.code == 0 || strings.Contains(r.stderr, "no credential") {
		t.Errorf("certificate-less client of a server without verifiers: %s, want refused", r)
	}
	if err := handshakeWithoutCert(srv.info.Address, p); err != nil {
		t.Errorf("server with verifiers: a TLS handshake without a client certificate: %v", err)
	}
	if err := handshakeWithoutCert(plainSrv.info.Address, pp); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("server without verifiers: a TLS handshake without a client certificate: %v, want refused as certificate required", err)
	}
}

// handshakeWithoutCert completes a TLS handshake with the frontend at address
// presenting no client certificate, and waits briefly for the server's
// verdict (with TLS 1.3 the server refuses after the client's Finished).
func handshakeWithoutCert(address string, p *pki.PKI) error {
	host, _, _ := net.SplitHostPort(address)
	conn, err := tls.Dial("tcp", address, &tls.Config{RootCAs: p.Pool(), ServerName: host, NextProtos: []string{"h2"}})
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	// The server speaks first in HTTP/2 (its SETTINGS frame), or sends the
	// alert that ends the connection.
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		return err
	}
	return nil
}
