// Package tlstest writes a throwaway certificate authority and certificates
// for tests of TLS connections on loopback.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose files live in a test's directory.
type CA struct {
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
}

// Pair is a certificate and its key, as PEM files.
type Pair struct{ CertFile, KeyFile string }

// NewCA writes a new self-signed CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := NewCAIn(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// NewCAIn is NewCA for a caller without a test (a benchmark command): the
// CA's files, and those of the certificates it issues, go in dir.
func NewCAIn(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{CertFile: filepath.Join(dir, name+"-ca.pem"), cert: cert, key: key, dir: dir}
	return ca, writePEM(ca.CertFile, "CERTIFICATE", der)
}

// Issue writes a certificate for name, valid for both server and client auth
// on 127.0.0.1 and localhost.
func (ca *CA) Issue(t testing.TB, name string) Pair {
	t.Helper()
	p, err := ca.IssueFiles(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// IssueFiles is Issue for a caller without a test.
func (ca *CA) IssueFiles(name string) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem")}
	if err := writePEM(p.CertFile, "CERTIFICATE", der); err != nil {
		return Pair{}, err
	}
	return p, writePEM(p.KeyFile, "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
