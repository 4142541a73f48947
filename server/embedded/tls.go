package embedded

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"go.temporal.io/server/common/config"
)

// TLS makes the frontend accept only mutual TLS: its certificate is CertFile
// (with KeyFile), and clients must present a certificate signed by CAFile. The
// server's own clients of its frontend (its system worker, the readiness
// check) present CertFile too, so it must be valid for client auth as well and
// name the frontend's host. Other services stay on loopback without TLS.
type TLS struct {
	CertFile, KeyFile, CAFile string
}

// apply sets the server configuration for t.
func (t *TLS) apply(cfg *config.Config) {
	client := config.ClientTLS{RootCAFiles: []string{t.CAFile}}
	cfg.Global.TLS.Frontend = config.GroupTLS{
		Server: config.ServerTLS{CertFile: t.CertFile, KeyFile: t.KeyFile, ClientCAFiles: []string{t.CAFile}, RequireClientAuth: true},
		Client: client,
	}
	cfg.Global.TLS.SystemWorker = config.WorkerTLS{CertFile: t.CertFile, KeyFile: t.KeyFile, Client: client}
}

// clientConfig is the TLS the server's own clients use.
func (t *TLS) clientConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: TLS certificate: %w", err)
	}
	ca, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("embedded temporal: TLS CA %s holds no PEM certificate", t.CAFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}, nil
}
