package embedded

import (
	"crypto/tls"
	"errors"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/rpc/encryption"
)

// certOptional is Temporal's own TLS provider for cfg with one change: the
// frontend verifies a client certificate when one is given but does not
// require one, so that a client holding only a bearer token (a CI job with a
// kumo token or an OIDC JWT) can connect. It is used only when the server has
// bearer verifiers: the frontend's interceptor then refuses any call with
// neither a verified certificate nor a valid bearer token. Internode,
// system-worker and client configurations are Temporal's, unchanged.
type certOptional struct {
	encryption.TLSConfigProvider
}

func newCertOptional(tlsCfg config.RootTLS, logger log.Logger) (*certOptional, error) {
	inner, err := encryption.NewTLSConfigProviderFromConfig(tlsCfg, metrics.NoopMetricsHandler, logger, nil)
	if err != nil {
		return nil, err
	}
	return &certOptional{inner}, nil
}

// GetFrontendServerConfig is Temporal's frontend configuration with
// ClientAuth relaxed to VerifyClientCertIfGiven, including the per-connection
// configurations its GetConfigForClient builds.
func (p *certOptional) GetFrontendServerConfig() (*tls.Config, error) {
	c, err := p.TLSConfigProvider.GetFrontendServerConfig()
	if err != nil {
		return nil, err
	}
	if c == nil {
		// Fail closed: the frontend must never fall back to plaintext.
		return nil, errors.New("embedded temporal: the frontend has no TLS configuration")
	}
	c = relaxClientAuth(c)
	if perConn := c.GetConfigForClient; perConn != nil {
		c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			cc, err := perConn(hello)
			if err != nil || cc == nil {
				return cc, err
			}
			return relaxClientAuth(cc), nil
		}
	}
	return c, nil
}

// relaxClientAuth is a copy of c that verifies a client certificate against
// c's ClientCAs when one is presented, and accepts a connection without one.
func relaxClientAuth(c *tls.Config) *tls.Config {
	c = c.Clone()
	if c.ClientAuth == tls.RequireAndVerifyClientCert {
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c
}
