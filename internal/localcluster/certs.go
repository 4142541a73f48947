package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// credentials are the files the apiserver and its clients share. They are created
// once per Dir and reused when the cluster is started again over the same Dir.
type credentials struct {
	caFile, certFile, keyFile string // serving CA and certificate
	saKeyFile                 string // service-account signing key (RSA)
	tokenFile                 string // --token-auth-file
	token                     string
	caPEM                     []byte
}

const adminUser = "kumo-admin"

func ensureCredentials(dir string) (*credentials, error) {
	pki := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	c := &credentials{
		caFile:    filepath.Join(pki, "ca.crt"),
		certFile:  filepath.Join(pki, "apiserver.crt"),
		keyFile:   filepath.Join(pki, "apiserver.key"),
		saKeyFile: filepath.Join(pki, "sa.key"),
		tokenFile: filepath.Join(pki, "tokens.csv"),
	}
	if !exists(c.caFile, c.certFile, c.keyFile) {
		if err := writeServingCerts(c); err != nil {
			return nil, fmt.Errorf("generate serving certificates: %w", err)
		}
	}
	if !exists(c.saKeyFile) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		if err := writePEM(c.saKeyFile, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
			return nil, err
		}
	}
	if !exists(c.tokenFile) {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", hex.EncodeToString(b), adminUser, adminUser)
		if err := os.WriteFile(c.tokenFile, []byte(line), 0o600); err != nil {
			return nil, err
		}
	}
	tokens, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return nil, err
	}
	c.token, _, _ = strings.Cut(string(tokens), ",")
	if c.token == "" {
		return nil, fmt.Errorf("%s: no token", c.tokenFile)
	}
	if c.caPEM, err = os.ReadFile(c.caFile); err != nil {
		return nil, err
	}
	return c, nil
}

func writeServingCerts(c *credentials) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kumo-local-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(c.keyFile, "EC PRIVATE KEY", keyDER); err != nil {
		return err
	}
	if err := writePEM(c.certFile, "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(c.caFile, "CERTIFICATE", caDER)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func exists(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return false
		}
	}
	return true
}
