package client

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/kumoproj/kumo/server/embedded"
)

// DefaultDialTimeout bounds connecting to an existing Temporal cluster: a wrong
// address or a certificate the server refuses ends in one line within it
// instead of a hang.
const DefaultDialTimeout = 10 * time.Second

// ConnectionFlags are the command-line settings that override the profile and
// the environment; empty ones leave them alone.
type ConnectionFlags struct {
	Address, Namespace, APIKey             string
	TLSCertPath, TLSKeyPath, TLSCAPath     string
	TLSServerName, Profile, ConfigFilePath string
}

// LoadConnection reads how to reach an existing Temporal cluster the way the
// temporal CLI does (go.temporal.io/sdk/contrib/envconfig): the profile
// (TEMPORAL_PROFILE, else "default") of the config file (TEMPORAL_CONFIG_FILE,
// else the user's temporalio/temporal.toml), then the TEMPORAL_* environment
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA, TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA,
// TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA, TEMPORAL_TLS_SERVER_NAME, ...), then
// flags. An empty Address means no existing cluster was named.
func LoadConnection(f ConnectionFlags) (envconfig.ClientConfigProfile, error) {
	p, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
		ConfigFilePath: f.ConfigFilePath, ConfigFileProfile: f.Profile,
	})
	if err != nil {
		return p, fmt.Errorf("temporal client configuration: %w", err)
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&p.Address, f.Address)
	set(&p.Namespace, f.Namespace)
	set(&p.APIKey, f.APIKey)
	if f.TLSCertPath+f.TLSKeyPath+f.TLSCAPath+f.TLSServerName != "" {
		if p.TLS == nil {
			p.TLS = &envconfig.ClientConfigTLS{}
		}
		// A path given on the command line replaces data from the environment.
		if f.TLSCertPath != "" {
			p.TLS.ClientCertPath, p.TLS.ClientCertData = f.TLSCertPath, nil
		}
		if f.TLSKeyPath != "" {
			p.TLS.ClientKeyPath, p.TLS.ClientKeyData = f.TLSKeyPath, nil
		}
		if f.TLSCAPath != "" {
			p.TLS.ServerCACertPath, p.TLS.ServerCACertData = f.TLSCAPath, nil
		}
		set(&p.TLS.ServerName, f.TLSServerName)
	}
	if p.Namespace == "" {
		p.Namespace = embedded.DefaultNamespace
	}
	return p, nil
}

// DialOptions are what Dial needs besides the SDK's own options.
type DialOptions struct {
	// Timeout bounds the connection and the namespace check; default
	// DefaultDialTimeout.
	Timeout time.Duration
	// RegisterRetention, when not zero, registers p's namespace with this
	// retention of closed workflows if it does not exist, instead of
	// failing (kumo temporal setup).
	RegisterRetention time.Duration
}

// Dial connects to an existing Temporal cluster with the connection p (see
// LoadConnection) and checks that p's namespace exists there. Every failure is
// one line naming the address and what to change: unreachable, TLS refused,
// credentials refused, unknown namespace.
func Dial(ctx context.Context, p envconfig.ClientConfigProfile, base sdkclient.Options, do DialOptions) (sdkclient.Client, error) {
	opts, err := p.ToClientOptions(envconfig.ToClientOptionsRequest{})
	if err != nil {
		return nil, fmt.Errorf("temporal connection to %s: %w", p.Address, err)
	}
	opts.Logger, opts.MetricsHandler, opts.Identity = base.Logger, base.MetricsHandler, base.Identity
	opts.DataConverter = base.DataConverter
	opts.Interceptors = append(opts.Interceptors, base.Interceptors...)
	if opts.ConnectionOptions.TLS == nil {
		// The home's own server, found by the caller (HomeServerTLS).
		opts.ConnectionOptions.TLS = base.ConnectionOptions.TLS
	}
	if opts.ConnectionOptions.GrpcCompression == nil {
		opts.ConnectionOptions.GrpcCompression = compressionFor(p.Address)
	}
	if do.Timeout <= 0 {
		do.Timeout = DefaultDialTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, do.Timeout)
	defer cancel()
	tc, err := sdkclient.DialContext(ctx, opts)
	if err != nil {
		return nil, dialError(p, do.Timeout, err)
	}
	_, err = tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: p.Namespace})
	var nf *serviceerror.NamespaceNotFound
	if errors.As(err, &nf) && do.RegisterRetention > 0 {
		// Not within do.Timeout: the frontend takes up to its namespace
		// cache's refresh interval (10 s by default) to serve a new one.
		rctx, rcancel := context.WithTimeout(parent, registerWait)
		err = registerNamespace(rctx, tc, p.Namespace, do.RegisterRetention)
		rcancel()
	}
	if err != nil {
		tc.Close()
		return nil, dialError(p, do.Timeout, err)
	}
	return tc, nil
}

// registerWait bounds registering a namespace and waiting until it is served.
const registerWait = time.Minute

// registerNamespace registers namespace and waits until the frontend serves
// it: its namespace cache refreshes every few seconds, and until then calls
// naming the namespace (other than DescribeNamespace, which reads the
// database) fail with NamespaceNotFound. One registered meanwhile by someone
// else is left as it is.
func registerNamespace(ctx context.Context, tc sdkclient.Client, namespace string, retention time.Duration) error {
	_, err := tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(retention),
		Description: "kumo runs (registered by kumo temporal setup)",
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register namespace %q: %w", namespace, err)
	}
	for {
		_, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		var nf *serviceerror.NamespaceNotFound
		var nf2 *serviceerror.NotFound
		if !errors.As(err, &nf) && !errors.As(err, &nf2) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %q registered but not yet served by the frontend: %w", namespace, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// dialError turns the SDK's and gRPC's error into one line that says what is wrong.
func dialError(p envconfig.ClientConfigProfile, timeout time.Duration, err error) error {
	at := "Temporal at " + p.Address
	var nf *serviceerror.NamespaceNotFound
	var nf2 *serviceerror.NotFound
	if errors.As(err, &nf) || errors.As(err, &nf2) {
		return fmt.Errorf("namespace %q does not exist on %s (TEMPORAL_NAMESPACE, --temporal-namespace)", p.Namespace, at)
	}
	msg := err.Error()
	if s, ok := status.FromError(err); ok {
		msg = s.Message()
		switch s.Code() {
		case codes.Unauthenticated, codes.PermissionDenied:
			return fmt.Errorf("%s refused the credentials for namespace %q: %s (TEMPORAL_API_KEY, --api-key, TEMPORAL_TLS_CLIENT_CERT_PATH)", at, p.Namespace, oneLine(msg))
		}
	}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &unknownAuthority) || strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Errorf("TLS with %s failed: its certificate is not signed by the trusted CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH, --tls-ca-path)", at)
	case errors.As(err, &hostname) || strings.Contains(msg, "certificate is valid for"):
		return fmt.Errorf("TLS with %s failed: %s (TEMPORAL_TLS_SERVER_NAME, --tls-server-name)", at, tlsReason(msg))
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate authority"):
		return fmt.Errorf("TLS with %s failed: it refused the client certificate: %s (TEMPORAL_TLS_CLIENT_CERT_PATH, --tls-cert-path)", at, tlsReason(msg))
	case p.TLS != nil && (p.TLS.ClientCertPath != "" || len(p.TLS.ClientCertData) > 0) && (strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset")):
		// With TLS 1.3 the server checks the client certificate after the
		// client's handshake is done: a refusal often reaches the client as
		// the connection closing under its first write, not as an alert.
		return fmt.Errorf("TLS with %s failed: it closed the connection after the handshake, so it probably refused the client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, --tls-cert-path)", at)
	case strings.Contains(msg, "server preface"):
		return fmt.Errorf("cannot talk to %s without TLS: it closed the connection, so it probably requires TLS (TEMPORAL_TLS_*, --tls-*)", at)
	case strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:") || strings.Contains(msg, "handshake"):
		return fmt.Errorf("TLS with %s failed: %s (TEMPORAL_TLS_*, --tls-*)", at, tlsReason(msg))
	}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) || strings.Contains(msg, "no such host") || strings.Contains(msg, "no children to pick from"):
		return fmt.Errorf("cannot reach %s: unknown host (TEMPORAL_ADDRESS, --temporal-address)", at)
	case strings.Contains(msg, "connection refused"):
		return fmt.Errorf("cannot reach %s: connection refused (TEMPORAL_ADDRESS, --temporal-address)", at)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "deadline exceeded"):
		return fmt.Errorf("cannot reach %s within %s: %s (TEMPORAL_ADDRESS, --temporal-address; TLS and API key settings)", at, timeout, lastReason(msg))
	}
	return fmt.Errorf("cannot connect to %s: %s", at, oneLine(msg))
}

// tlsReason keeps the part of a gRPC transport message after its last "tls: " or "x509: ".
func tlsReason(msg string) string {
	msg = oneLine(msg)
	for _, mark := range []string{"x509: ", "tls: "} {
		if i := strings.LastIndex(msg, mark); i >= 0 {
			return strings.TrimRight(msg[i:], `"`)
		}
	}
	return msg
}

func lastReason(msg string) string {
	msg = oneLine(msg)
	if i := strings.LastIndex(msg, "desc = "); i >= 0 {
		return strings.Trim(msg[i+len("desc = "):], `"`)
	}
	return msg
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// CheckSearchAttributes fails, naming the command that fixes it, when the
// namespace of an existing cluster lacks kumo's search attributes: runs could
// not be started or listed there.
func CheckSearchAttributes(ctx context.Context, tc sdkclient.Client, p envconfig.ClientConfigProfile) error {
	missing, err := embedded.MissingSearchAttributes(ctx, tc, p.Namespace)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("namespace %q on Temporal at %s lacks kumo's search attributes %s: run `kumo temporal setup --temporal-address %s --temporal-namespace %s` (with the same TLS and API key settings) once",
			p.Namespace, p.Address, strings.Join(missing, ", "), p.Address, p.Namespace)
	}
	return nil
}
