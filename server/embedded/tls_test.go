package embedded

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/tlstest"
)

// reach calls the health service at address with creds and reports whether
// the call got past the transport: a server answer of any kind (even an
// error status) means the caller was let in.
func reach(t *testing.T, address string, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unavailable && s.Code() != codes.DeadlineExceeded {
		return nil
	}
	return err
}

// TestEveryPortRequiresTheHomesCertificates: the frontend serves TLS and
// refuses a client without a certificate of the home's CA; history, matching
// and the worker service refuse everything but the server's own certificate.
// The home's owner gets in.
func TestEveryPortRequiresTheHomesCertificates(t *testing.T) {
	s := newServer(t, t.TempDir())
	other, err := pki.Open(t.TempDir(), pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tlsOf := func(p *pki.PKI, pair pki.Pair) credentials.TransportCredentials {
		cfg, err := p.ClientTLS(pair, s.PKI().Pool())
		if err != nil {
			t.Fatal(err)
		}
		return credentials.NewTLS(cfg)
	}
	noCert := credentials.NewTLS(&tls.Config{RootCAs: s.PKI().Pool()})
	strangers := map[string]credentials.TransportCredentials{
		"plaintext":                  insecure.NewCredentials(),
		"TLS without a certificate":  noCert,
		"another home's owner":       tlsOf(other, other.OwnerCert()),
		"another home's server cert": tlsOf(other, other.Server()),
		"another home's system cert": tlsOf(other, other.System()),
	}
	for name, creds := range strangers {
		if err := reach(t, s.Address(), creds); err == nil {
			t.Errorf("frontend let in a client with %s", name)
		}
		for _, a := range s.InternalAddresses() {
			if err := reach(t, a, creds); err == nil {
				t.Errorf("internal service %s let in a client with %s", a, name)
			}
		}
	}
	if err := reach(t, s.Address(), tlsOf(s.PKI(), s.PKI().OwnerCert())); err != nil {
		t.Errorf("frontend refused the home's owner: %v", err)
	}
	for _, a := range s.InternalAddresses() {
		inCfg, err := s.PKI().ClientTLS(s.PKI().Internode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		inCfg.RootCAs = nil
		inCfg.InsecureSkipVerify = true // the client side of the check is not under test
		if err := reach(t, a, credentials.NewTLS(inCfg)); err != nil {
			t.Errorf("internal service %s refused the server's own certificate: %v", a, err)
		}
		if err := reach(t, a, tlsOf(s.PKI(), s.PKI().OwnerCert())); err == nil {
			t.Errorf("internal service %s let in the owner's client certificate: only the server's services may talk to it", a)
		}
	}
	// And a Temporal call, not just the health check, goes through for the owner.
	co := ownerConnection(t, s)
	conn, err := grpc.NewClient(s.Address(), grpc.WithTransportCredentials(credentials.NewTLS(co.TLS)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := workflowservice.NewWorkflowServiceClient(conn).GetSystemInfo(ctxTimeout(t, 5*time.Second), &workflowservice.GetSystemInfoRequest{}); err != nil {
		t.Errorf("owner: GetSystemInfo: %v", err)
	}
}

// TestOperatorTLS: the frontend serves the operator's certificate and takes
// client certificates of the operator's CA; files that cannot be used fail
// Start with their name.
func TestOperatorTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "operator")
	srvPair, clientPair := ca.Issue(t, "frontend"), ca.Issue(t, "alice")
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), TLS: &TLS{CertFile: srvPair.CertFile, KeyFile: srvPair.KeyFile, CAFile: ca.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	cfg, err := s.PKI().ClientTLS(pki.Pair{CertFile: clientPair.CertFile, KeyFile: clientPair.KeyFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Only the operator's CA: the server must present the operator's certificate.
	cfg.RootCAs = nil
	opCfg, err := (&TLS{CertFile: clientPair.CertFile, KeyFile: clientPair.KeyFile, CAFile: ca.CertFile}).check()
	if err != nil {
		t.Fatal(err)
	}
	cfg.RootCAs = opCfg
	if err := reach(t, s.Address(), credentials.NewTLS(cfg)); err != nil {
		t.Errorf("operator-issued client refused: %v", err)
	}
	if err := reach(t, s.Address(), credentials.NewTLS(&tls.Config{RootCAs: opCfg})); err == nil {
		t.Error("a client without a certificate got in")
	}

	missing := filepath.Join(t.TempDir(), "missing.pem")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*TLS{
		"missing certificate": {CertFile: missing, KeyFile: srvPair.KeyFile, CAFile: ca.CertFile},
		"garbage key":         {CertFile: srvPair.CertFile, KeyFile: garbage, CAFile: ca.CertFile},
		"missing CA":          {CertFile: srvPair.CertFile, KeyFile: srvPair.KeyFile, CAFile: missing},
		"garbage CA":          {CertFile: srvPair.CertFile, KeyFile: srvPair.KeyFile, CAFile: garbage},
		"no CA":               {CertFile: srvPair.CertFile, KeyFile: srvPair.KeyFile},
	} {
		_, err := Start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), TLS: bad})
		if err == nil {
			t.Errorf("%s: Start succeeded", name)
			continue
		}
		if name != "no CA" && !strings.Contains(err.Error(), missing) && !strings.Contains(err.Error(), garbage) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
}

// TestNothingElseListens: the frontend's HTTP API, metrics and pprof are off.
func TestNothingElseListens(t *testing.T) {
	cfg := serverConfig(sqlConfig("x.db", true), servicePorts{1, 2, 3, 4}, host)
	for name, svc := range cfg.Services {
		if svc.RPC.HTTPPort != 0 {
			t.Errorf("%s: HTTP port %d, want 0 (off)", name, svc.RPC.HTTPPort)
		}
		if svc.RPC.MembershipPort != 0 {
			t.Errorf("%s: membership port %d, want 0 (static hosts)", name, svc.RPC.MembershipPort)
		}
	}
	if cfg.Global.Metrics != nil {
		t.Errorf("metrics configured: %+v", cfg.Global.Metrics)
	}
	if cfg.Global.PProf.Port != 0 {
		t.Errorf("pprof on port %d", cfg.Global.PProf.Port)
	}
}
