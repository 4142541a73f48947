package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/embedded"
)

// ErrNoServer is returned by a client that must not start an embedded server
// (see RequireServer) when no kumo server runs on its home.
var ErrNoServer = errors.New("no kumo server is running")

// RequireServer makes the client refuse to run Temporal in its own process:
// it attaches to a kumo server (or uses the address given) or fails with
// ErrNoServer. For runs that must go on after the command exits.
func (c *Client) RequireServer() { c.requireServer = true }

// Server is the kumo server this client attached to; nil if it did not (yet).
func (c *Client) Server() *server.Info { return c.attached }

// temporalAddress finds this client's Temporal: the address it was given,
// else a live kumo server on its home (attach: no embedded server, no lock),
// else a one-shot embedded server started in this process. For the home's
// own server it returns the TLS the home's owner dials it with: the owner's
// certificate from the home's PKI, which only the owner can read.
func (c *Client) temporalAddress(ctx context.Context) (string, *tls.Config, error) {
	if c.opts.TemporalAddress != "" {
		return c.opts.TemporalAddress, nil, nil
	}
	home := absHome(c.opts.Home)
	info, err := server.Live(home)
	if err != nil {
		return "", nil, err
	}
	if info != nil {
		if err := c.canAttach(home, info); err != nil {
			return "", nil, err
		}
		cert := (*pki.PKI).OwnerCert
		if c.opts.CallerCredentials {
			cert = (*pki.PKI).UI
		}
		tlsCfg, err := homeTLS(home, info, cert)
		if err != nil {
			return "", nil, err
		}
		c.attached = info
		return info.Address, tlsCfg, nil
	}
	if c.requireServer || c.opts.CallerCredentials {
		return "", nil, fmt.Errorf("%w on %s: start one with `kumo server --home %s`, or pass --temporal-address", ErrNoServer, home, home)
	}
	srv, err := embedded.Start(ctx, embedded.Options{Dir: server.TemporalDir(home), Home: home, Namespace: c.opts.Namespace, Logger: c.opts.Logger, Auditor: c.FrontendAuditor(), Quota: authz.DefaultQuota})
	var locked *embedded.LockedError
	if errors.As(err, &locked) {
		return "", nil, &homeBusyError{home: home, locked: locked}
	}
	if err != nil {
		return "", nil, err
	}
	c.server = srv
	tlsCfg, err := srv.ClientTLS(srv.PKI().OwnerCert())
	if err != nil {
		return "", nil, err
	}
	return srv.Address(), tlsCfg, nil
}

// HomeServerTLS is how the home's owner dials address when it is the kumo
// server running on home (a `kumo worker --temporal-address` beside it, say):
// with the owner's certificate. nil when no kumo server on home listens
// there: address is then another Temporal, dialled as configured.
func HomeServerTLS(home, address string) (*tls.Config, error) {
	home = absHome(home)
	info, err := server.Live(home)
	if err != nil || info == nil || (info.Address != address && info.Listen != address) {
		return nil, err
	}
	return ownerTLS(home, info)
}

// ownerTLS is how the home's owner dials the kumo server on home: with the
// owner's certificate, trusting the home's CA and the operator's CA the
// server recorded, if any.
func ownerTLS(home string, info *server.Info) (*tls.Config, error) {
	return homeTLS(home, info, (*pki.PKI).OwnerCert)
}

// homeTLS is ownerTLS with the home's certificate cert picks.
func homeTLS(home string, info *server.Info, cert func(*pki.PKI) pki.Pair) (*tls.Config, error) {
	p, err := pki.Open(home, pki.Options{})
	if err != nil {
		return nil, err
	}
	roots := p.Pool()
	if info.TLSCAFile != "" {
		pem, err := os.ReadFile(info.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("the kumo server on %s serves a certificate of the CA %s, which this command cannot read: %w", home, info.TLSCAFile, err)
		}
		roots = roots.Clone()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the kumo server on %s names the CA %s, which holds no PEM certificate", home, info.TLSCAFile)
		}
	}
	return p.ClientTLS(cert(p), roots)
}

// canAttach refuses a server that would run this client's runs somewhere else
// than where the client reads them.
func (c *Client) canAttach(home string, info *server.Info) error {
	if info.Namespace != c.opts.Namespace {
		return fmt.Errorf("the kumo server on %s (pid %d) serves Temporal namespace %q, not %q: use --temporal-namespace %s, or stop it and start `kumo server --temporal-namespace %s`",
			home, info.PID, info.Namespace, c.opts.Namespace, info.Namespace, c.opts.Namespace)
	}
	if info.CodecKeyFile != keyFile(c.keys) {
		return fmt.Errorf("the kumo server on %s (pid %d) encrypts payloads with the codec key file %q, this command with %q: use the same KUMO_CODEC_KEY_FILE for both",
			home, info.PID, info.CodecKeyFile, keyFile(c.keys))
	}
	if info.Backend != c.opts.Backend {
		return fmt.Errorf("the kumo server on %s (pid %d) keeps releases in %s, this command in %s: stop it and start `kumo server --backend %s`",
			home, info.PID, backendName(info.Backend, home), backendName(c.opts.Backend, home), c.opts.Backend)
	}
	return nil
}

func backendName(backend, home string) string {
	if backend == "" {
		return home
	}
	return backend
}

// homeBusyError: without a kumo server, one kumo command at a time may use a
// home's Temporal database.
type homeBusyError struct {
	home   string
	locked *embedded.LockedError
}

func (e *homeBusyError) Error() string {
	return fmt.Sprintf("another kumo command%s is using %s; wait for it to finish, or start `kumo server --home %s` so that any number of kumo commands can use it at once",
		e.locked.Holder(), e.home, e.home)
}

func (e *homeBusyError) Unwrap() error { return e.locked }

func absHome(home string) string {
	if a, err := filepath.Abs(home); err == nil {
		return a
	}
	return home
}
