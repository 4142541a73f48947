// Package pki is a kumo home's private certificate authority: the
// certificates that make the home's Temporal server usable by the account
// that owns the home and by nobody else, with nothing to configure.
//
// On first use it creates, under $KUMO_HOME/tls (mode 0700), an ECDSA CA and
// four leaf certificates signed by it, each stored with its key in one file
// of mode 0600 so that a certificate and its key are always replaced
// together:
//
//   - server.pem: the frontend's certificate (127.0.0.1, ::1, localhost and
//     any further hosts asked for);
//   - system.pem: Temporal's own system worker, and the server's own calls
//     to its frontend (readiness, search attributes);
//   - owner.pem: the home owner's client certificate, subject
//     "local:<user>" where user owns the home directory: what the CLI, the
//     in-process worker and `kumo server`'s worker present;
//   - ui.pem: the Web UI server's transport identity, which carries no right
//     of its own (the UI forwards its user's credential).
//
// Temporal's own services (history, matching, worker) talk to each other
// with internode.pem, issued by a second CA (internode-ca.pem) that signs
// nothing else: no client certificate of the home, the owner's included, is
// accepted on those ports, so every request goes through the frontend.
//
// Later uses reuse them, and reissue a leaf that is close to expiry, no
// longer verifies under the CA, or lacks a host now asked for. Two processes
// opening the same home at once are serialised by a lock file. Another local
// account cannot read the keys (mode 0600 in a 0700 directory), which is what
// keeps it out of the server.
package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Common names of the certificates the home issues to its own parts.
const (
	// ServerName is the server certificate's common name.
	ServerName = "kumo-server"
	// SystemName is the common name of Temporal's own system worker.
	SystemName = "kumo-system"
	// UIName is the common name of the Web UI server's transport identity.
	UIName = "kumo-ui"
	// LocalPrefix starts the subject of a local account: "local:alice".
	LocalPrefix = "local:"
)

// DirName is the directory under the home that holds the PKI.
const DirName = "tls"

const (
	caFile     = "ca.pem"
	caKeyFile  = "ca-key.pem"
	lockFile   = "lock"
	serverFile = "server.pem"
	systemFile = "system.pem"
	ownerFile  = "owner.pem"
	uiFile     = "ui.pem"

	internodeCAFile    = "internode-ca.pem"
	internodeCAKeyFile = "internode-ca-key.pem"
	internodeFile      = "internode.pem"

	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 90 * 24 * time.Hour
	// renewBefore: a leaf with less left than this is reissued on Open, so a
	// server started today keeps valid certificates for at least this long.
	renewBefore = 30 * 24 * time.Hour
)

// Options configure Open.
type Options struct {
	// Hosts are further DNS names or IP addresses the server certificate must
	// be valid for, beyond 127.0.0.1, ::1 and localhost.
	Hosts []string
	// now is the clock, for tests of renewal; nil: time.Now.
	now func() time.Time
}

// Pair is a certificate and its key. In the home's PKI both are in one file
// (CertFile == KeyFile), so that they are replaced together.
type Pair struct {
	CertFile, KeyFile string
}

// PKI is a home's certificate authority and the certificates it issued.
type PKI struct {
	dir   string
	owner string
	ca    *x509.Certificate
	pool  *x509.CertPool
}

// InternodeName is the internode certificate's common name.
const InternodeName = "kumo-internode"

// Open returns the PKI of the kumo home, creating the home (0700) and its
// PKI under home/tls on first use and renewing leaf certificates that need
// it.
func Open(home string, opts Options) (*PKI, error) {
	if opts.now == nil {
		opts.now = time.Now
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("kumo PKI: %w", err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("kumo PKI: create home %s: %w", home, err)
	}
	owner, err := HomeOwner(home)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(home, DirName)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("kumo PKI: create %s: %w", dir, err)
	}
	if err := checkPrivate(dir); err != nil {
		return nil, err
	}
	unlock, err := lock(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, err
	}
	defer unlock()

	ca, caKey, err := loadOrCreateCA(dir, caFile, caKeyFile, "kumo home CA", opts.now())
	if err != nil {
		return nil, err
	}
	p := &PKI{dir: dir, owner: owner, ca: ca, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	hosts := append([]string{"127.0.0.1", "::1", "localhost"}, opts.Hosts...)
	leaves := []leaf{
		{file: serverFile, name: ServerName, hosts: hosts, server: true},
		{file: systemFile, name: SystemName, client: true},
		{file: ownerFile, name: owner, client: true},
		{file: uiFile, name: UIName, client: true},
	}
	for _, l := range leaves {
		if err := ensureLeaf(dir, l, ca, caKey, p.pool, opts.now()); err != nil {
			return nil, err
		}
	}
	inCA, inKey, err := loadOrCreateCA(dir, internodeCAFile, internodeCAKeyFile, "kumo internode CA", opts.now())
	if err != nil {
		return nil, err
	}
	inPool := x509.NewCertPool()
	inPool.AddCert(inCA)
	internode := leaf{file: internodeFile, name: InternodeName, hosts: []string{"127.0.0.1", "::1", "localhost"}, server: true, client: true}
	if err := ensureLeaf(dir, internode, inCA, inKey, inPool, opts.now()); err != nil {
		return nil, err
	}
	return p, nil
}

// Dir is the directory holding the PKI.
func (p *PKI) Dir() string { return p.dir }

// Owner is the subject of the home's owner: "local:<user>".
func (p *PKI) Owner() string { return p.owner }

// CAFile is the CA certificate's file (PEM).
func (p *PKI) CAFile() string { return filepath.Join(p.dir, caFile) }

// CA is the CA certificate.
func (p *PKI) CA() *x509.Certificate { return p.ca }

// Pool is a pool holding only the CA.
func (p *PKI) Pool() *x509.CertPool { return p.pool }

// InternodeCAFile is the file of the CA that issued only Internode.
func (p *PKI) InternodeCAFile() string { return filepath.Join(p.dir, internodeCAFile) }

// Internode is the certificate Temporal's services present to each other,
// as servers and as clients.
func (p *PKI) Internode() Pair { return p.pair(internodeFile) }

// Server is the frontend's certificate.
func (p *PKI) Server() Pair { return p.pair(serverFile) }

// System is the certificate of Temporal's own system worker.
func (p *PKI) System() Pair { return p.pair(systemFile) }

// OwnerCert is the home owner's client certificate.
func (p *PKI) OwnerCert() Pair { return p.pair(ownerFile) }

// UI is the Web UI server's client certificate.
func (p *PKI) UI() Pair { return p.pair(uiFile) }

func (p *PKI) pair(name string) Pair {
	f := filepath.Join(p.dir, name)
	return Pair{CertFile: f, KeyFile: f}
}

// ClientTLS is the TLS configuration of a client presenting pair to a server
// whose certificate is signed by roots (nil: this PKI's CA).
func (p *PKI) ClientTLS(pair Pair, roots *x509.CertPool) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("kumo PKI: client certificate %s: %w", pair.CertFile, err)
	}
	if roots == nil {
		roots = p.pool
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// IssuedBy reports whether chain (a verified chain, leaf first) ends at this
// PKI's CA: a certificate the home issued to one of its own parts.
func (p *PKI) IssuedBy(chain []*x509.Certificate) bool {
	return len(chain) > 0 && chain[len(chain)-1].Equal(p.ca)
}

// Hosts reports the hosts the server certificate is valid for.
func (p *PKI) Hosts() ([]string, error) {
	c, _, err := readLeaf(filepath.Join(p.dir, serverFile))
	if err != nil {
		return nil, err
	}
	hosts := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	return hosts, nil
}
