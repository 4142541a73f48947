package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// leaf is a certificate the home issues.
type leaf struct {
	file  string
	name  string   // common name
	hosts []string // DNS names and IPs, for a server certificate
	// server, client: the extended key usages it is valid for.
	server, client bool
}

// loadOrCreateCA reads the CA, or creates it when missing or near expiry (a
// new CA means new leaves: they no longer verify and are reissued).
func loadOrCreateCA(dir, certName, keyName, cn string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := filepath.Join(dir, certName), filepath.Join(dir, keyName)
	cert, key, err := readCA(certPath, keyPath)
	switch {
	case err == nil && now.Add(renewBefore).Before(cert.NotAfter):
		return cert, key, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, nil, err
	}
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn, Organization: []string{"kumo"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caValidity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: create CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: CA key: %w", err)
	}
	// The key first: a CA certificate without its key would be useless.
	if err := writeAtomic(keyPath, pemBlock("EC PRIVATE KEY", keyDER), 0o600); err != nil {
		return nil, nil, err
	}
	if err := writeAtomic(certPath, pemBlock("CERTIFICATE", der), 0o644); err != nil {
		return nil, nil, err
	}
	cert, err = x509.ParseCertificate(der)
	return cert, key, err
}

func readCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: read CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: read CA key: %w", err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: CA %s: %w", certPath, err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: CA key %s: %w", keyPath, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("kumo PKI: CA key %s does not match %s", keyPath, certPath)
	}
	return cert, key, nil
}

// ensureLeaf keeps l's file if its certificate verifies under the CA, names
// l, covers l's hosts and has more than renewBefore left; else reissues it.
func ensureLeaf(dir string, l leaf, ca *x509.Certificate, caKey *ecdsa.PrivateKey, pool *x509.CertPool, now time.Time) error {
	path := filepath.Join(dir, l.file)
	cert, _, err := readLeaf(path)
	if err == nil && leafUsable(cert, l, pool, now) {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("kumo PKI: %s key: %w", l.file, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: l.name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(leafValidity),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if l.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if l.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range l.hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("kumo PKI: issue %s: %w", l.file, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("kumo PKI: %s key: %w", l.file, err)
	}
	return writeAtomic(path, append(pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER)...), 0o600)
}

func leafUsable(cert *x509.Certificate, l leaf, pool *x509.CertPool, now time.Time) bool {
	if cert.Subject.CommonName != l.name || !now.Add(renewBefore).Before(cert.NotAfter) || now.Before(cert.NotBefore) {
		return false
	}
	for _, u := range []struct {
		want  bool
		usage x509.ExtKeyUsage
	}{{l.client, x509.ExtKeyUsageClientAuth}, {l.server, x509.ExtKeyUsageServerAuth}} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{u.usage}})
		if (err == nil) != u.want {
			return false
		}
	}
	for _, h := range l.hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// readLeaf reads a file holding a certificate and its key, and checks they
// belong together.
func readLeaf(path string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: %w", err)
	}
	cert, err := parseCert(data)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: %s: %w", path, err)
	}
	key, err := parseKey(data)
	if err != nil {
		return nil, nil, fmt.Errorf("kumo PKI: %s: %w", path, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("kumo PKI: %s: key does not match the certificate", path)
	}
	return cert, key, nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM certificate")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM EC private key")
		}
		if b.Type == "EC PRIVATE KEY" {
			return x509.ParseECPrivateKey(b.Bytes)
		}
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
