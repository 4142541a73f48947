package embedded

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"go.temporal.io/server/common/config"

	"github.com/kumoproj/kumo/internal/pki"
)

// TLS is the operator's certificate for a shared server: the frontend
// presents CertFile (with KeyFile) instead of the home's server certificate,
// and accepts client certificates signed by CAFile as well as the home's
// own. Files that cannot be read or parsed are an error at Start.
type TLS struct {
	CertFile, KeyFile, CAFile string
}

// Check reads t's files and says what is wrong with them, if anything.
func (t *TLS) Check() error {
	_, err := t.check()
	return err
}

// check reads t's files, so that a path that is wrong fails Start with a line
// naming it instead of leaving a server without the TLS it was given.
func (t *TLS) check() (*x509.CertPool, error) {
	if t.CertFile == "" || t.KeyFile == "" || t.CAFile == "" {
		return nil, fmt.Errorf("embedded temporal: TLS needs a certificate, its key and the clients' CA (got certificate %q, key %q, CA %q)", t.CertFile, t.KeyFile, t.CAFile)
	}
	if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
		return nil, fmt.Errorf("embedded temporal: TLS certificate %s with key %s: %w", t.CertFile, t.KeyFile, err)
	}
	ca, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("embedded temporal: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("embedded temporal: TLS CA %s holds no PEM certificate", t.CAFile)
	}
	return pool, nil
}

// applyTLS makes every port of the server speak mutual TLS: the frontend
// with the operator's certificate if given, else the home's, requiring a
// client certificate of the home's CA or the operator's; history, matching
// and the worker service (internode) with the home's internode certificate
// both ways, whose CA signs nothing else, so that only the server's own
// services get in; Temporal's
// system worker presents the home's "system" certificate to the frontend.
func applyTLS(cfg *config.Config, p *pki.PKI, op *TLS) {
	server := p.Server()
	frontend := config.ServerTLS{CertFile: server.CertFile, KeyFile: server.KeyFile, RequireClientAuth: true, ClientCAFiles: []string{p.CAFile()}}
	roots := []string{p.CAFile()}
	if op != nil {
		frontend.CertFile, frontend.KeyFile = op.CertFile, op.KeyFile
		frontend.ClientCAFiles = append(frontend.ClientCAFiles, op.CAFile)
		roots = append(roots, op.CAFile)
	}
	cfg.Global.TLS.Frontend = config.GroupTLS{Server: frontend, Client: config.ClientTLS{RootCAFiles: roots}}
	internode := p.Internode()
	cfg.Global.TLS.Internode = config.GroupTLS{
		Server: config.ServerTLS{CertFile: internode.CertFile, KeyFile: internode.KeyFile, RequireClientAuth: true, ClientCAFiles: []string{p.InternodeCAFile()}},
		Client: config.ClientTLS{RootCAFiles: []string{p.InternodeCAFile()}},
	}
	system := p.System()
	cfg.Global.TLS.SystemWorker = config.WorkerTLS{CertFile: system.CertFile, KeyFile: system.KeyFile, Client: config.ClientTLS{RootCAFiles: roots}}
}

// rootPool is what a client of the frontend trusts: the home's CA, and the
// operator's when its certificate is served.
func rootPool(p *pki.PKI, op *x509.CertPool) *x509.CertPool {
	if op == nil {
		return p.Pool()
	}
	pool := op.Clone()
	pool.AddCert(p.CA())
	return pool
}

// rootFiles is rootPool as PEM, for clients configured with bytes (the Web UI).
func rootFiles(p *pki.PKI, op *TLS) ([]byte, error) {
	files := []string{p.CAFile()}
	if op != nil {
		files = append(files, op.CAFile)
	}
	var out []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("embedded temporal: %w", err)
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}
