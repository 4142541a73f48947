package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestOpenCreatesPrivatePKI(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	p, err := Open(home, Options{Hosts: []string{"kumo.example", "10.1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if want := "local:" + u.Username; p.Owner() != want {
		t.Errorf("Owner() = %q, want %q", p.Owner(), want)
	}
	fi, err := os.Stat(p.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("%s mode %v, want 0700", p.Dir(), fi.Mode().Perm())
	}
	for _, f := range []string{caKeyFile, serverFile, systemFile, ownerFile, uiFile, internodeCAKeyFile, internodeFile} {
		fi, err := os.Stat(filepath.Join(p.Dir(), f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	names := map[Pair]string{p.System(): SystemName, p.OwnerCert(): p.Owner(), p.UI(): UIName}
	for pair, cn := range names {
		c, _, err := readLeaf(pair.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subject.CommonName != cn {
			t.Errorf("%s: CN %q, want %q", pair.CertFile, c.Subject.CommonName, cn)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: p.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s does not verify as a client under the CA: %v", pair.CertFile, err)
		}
		if !p.IssuedBy([]*x509.Certificate{c, p.CA()}) {
			t.Errorf("IssuedBy(%s) = false", cn)
		}
	}
	srv, _, err := readLeaf(p.Server().CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Verify(x509.VerifyOptions{Roots: p.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the server certificate is valid as a client certificate")
	}
	in, _, err := readLeaf(p.Internode().CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Verify(x509.VerifyOptions{Roots: p.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
		t.Error("the internode certificate verifies under the home CA, which clients use")
	}
	for _, h := range []string{"127.0.0.1", "::1", "localhost", "kumo.example", "10.1.2.3"} {
		if err := srv.VerifyHostname(h); err != nil {
			t.Errorf("server certificate: %v", err)
		}
	}
	if err := srv.VerifyHostname("127.0.0.2"); err == nil {
		t.Error("server certificate is valid for 127.0.0.2, which was not asked for")
	}
}

// TestOpenReuses: a second Open keeps every file as it is.
func TestOpenReuses(t *testing.T) {
	home := t.TempDir()
	p, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := readAll(t, p.Dir())
	if _, err := Open(home, Options{}); err != nil {
		t.Fatal(err)
	}
	after := readAll(t, p.Dir())
	for f, b := range before {
		if !bytes.Equal(b, after[f]) {
			t.Errorf("%s changed on the second Open", f)
		}
	}
}

// TestOpenRenews: a leaf close to expiry is reissued, the CA kept; a new host
// reissues the server certificate only.
func TestOpenRenews(t *testing.T) {
	home := t.TempDir()
	p, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := readAll(t, p.Dir())
	if _, err := Open(home, Options{Hosts: []string{"shared.example"}}); err != nil {
		t.Fatal(err)
	}
	mid := readAll(t, p.Dir())
	if bytes.Equal(before[serverFile], mid[serverFile]) {
		t.Error("server certificate not reissued for a new host")
	}
	if !bytes.Equal(before[ownerFile], mid[ownerFile]) || !bytes.Equal(before[caFile], mid[caFile]) {
		t.Error("a new host reissued more than the server certificate")
	}
	later := time.Now().Add(leafValidity - renewBefore + time.Hour)
	if _, err := Open(home, Options{now: func() time.Time { return later }}); err != nil {
		t.Fatal(err)
	}
	after := readAll(t, p.Dir())
	if !bytes.Equal(mid[caFile], after[caFile]) {
		t.Error("CA replaced although it is far from expiry")
	}
	for _, f := range []string{serverFile, systemFile, ownerFile, uiFile, internodeFile} {
		if bytes.Equal(mid[f], after[f]) {
			t.Errorf("%s not renewed close to expiry", f)
		}
		c, _, err := readLeaf(filepath.Join(p.Dir(), f))
		if err != nil {
			t.Fatal(err)
		}
		if !c.NotAfter.After(later.Add(renewBefore)) {
			t.Errorf("%s renewed until %v only", f, c.NotAfter)
		}
	}
}

// TestOpenReplacesDamagedLeaf: a leaf that does not parse, or whose key does
// not match, is reissued rather than served.
func TestOpenReplacesDamagedLeaf(t *testing.T) {
	home := t.TempDir()
	p, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.OwnerCert().CertFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(home, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readLeaf(p.OwnerCert().CertFile); err != nil {
		t.Fatalf("owner certificate not reissued: %v", err)
	}
}

// TestOpenConcurrent: processes opening a new home at once end with one CA
// that every leaf verifies under.
func TestOpenConcurrent(t *testing.T) {
	if os.Getenv("KUMO_PKI_HELPER_HOME") != "" {
		if _, err := Open(os.Getenv("KUMO_PKI_HELPER_HOME"), Options{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	home := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenConcurrent$")
			cmd.Env = append(os.Environ(), "KUMO_PKI_HELPER_HOME="+home)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = &exec.ExitError{Stderr: out}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("a concurrent Open failed: %s", err.(*exec.ExitError).Stderr)
		}
	}
	p, err := Open(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range []Pair{p.Server(), p.System(), p.OwnerCert(), p.UI()} {
		c, _, err := readLeaf(pair.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: p.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("%s: %v", pair.CertFile, err)
		}
	}
	entries, err := os.ReadDir(p.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestClientTLSHandshake: the owner's certificate and the server's complete
// a mutual TLS handshake under the home CA, and a certificate of another
// home's CA is refused.
func TestClientTLSHandshake(t *testing.T) {
	p, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := tls.LoadX509KeyPair(p.Server().CertFile, p.Server().KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientCAs: p.Pool(), ClientAuth: tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_, _ = c.Write([]byte("x"))
			c.Close()
		}
	}()
	dial := func(pki *PKI) error {
		cfg, err := pki.ClientTLS(pki.OwnerCert(), p.Pool())
		if err != nil {
			return err
		}
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Read(make([]byte, 1))
		return err
	}
	if err := dial(p); err != nil {
		t.Errorf("owner refused: %v", err)
	}
	if err := dial(other); err == nil {
		t.Error("a certificate of another home's CA was accepted")
	}
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, f := range []string{caFile, caKeyFile, serverFile, systemFile, ownerFile, uiFile, internodeCAFile, internodeCAKeyFile, internodeFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = b
	}
	return m
}
