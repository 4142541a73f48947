package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/internal/pki"
)

// principal is an authenticated caller.
type principal struct {
	subject authz.Subject
	// system is Temporal's own system worker: every right, nothing rewritten.
	system bool
}

// authenticate finds who calls: the bearer token's subject if the call
// carries one, else the client certificate's. The frontend's TLS has
// already verified the certificate against the home's CA or the operator's.
func (i *Interceptor) authenticate(ctx context.Context) (principal, error) {
	token, hasToken, err := bearer(ctx)
	if err != nil {
		return principal{}, err
	}
	// A bearer token is a credential of its own, with or without a client
	// certificate: the frontend accepts a connection without one only when
	// the server has bearer verifiers (server/embedded/clientauth.go).
	if hasToken {
		return i.verifyBearer(ctx, token)
	}
	chain := verifiedChain(ctx)
	if chain == nil {
		if len(i.verifiers) > 0 {
			return principal{}, status.Error(codes.Unauthenticated, "no credential: present a client certificate or an \"authorization: Bearer\" token (kumo token or OIDC)")
		}
		return principal{}, status.Error(codes.Unauthenticated, "no verified client certificate: kumo's frontend takes mutual TLS only")
	}
	cn := chain[0].Subject.CommonName
	home := i.pki.IssuedBy(chain)
	if home {
		switch cn {
		case i.pki.Owner():
			return principal{subject: authz.Subject{Name: cn}}, nil
		case pki.SystemName:
			return principal{subject: authz.Subject{Name: "system:" + pki.SystemName}, system: true}, nil
		case pki.UIName:
			return i.session(ctx)
		}
		return principal{}, status.Errorf(codes.Unauthenticated, "certificate %q of the home's CA names no client", cn)
	}
	if err := i.checkExternalName(cn); err != nil {
		return principal{}, status.Errorf(codes.Unauthenticated, "client certificate: %v", err)
	}
	return principal{subject: authz.Subject{Name: cn, Groups: chain[0].Subject.OrganizationalUnit}}, nil
}

// verifiedChain is the client certificate chain the TLS handshake verified.
func verifiedChain(ctx context.Context) []*x509.Certificate {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
		return nil
	}
	return ti.State.VerifiedChains[0]
}

// bearer is the call's "authorization: Bearer <token>", if any. Two
// authorization values, or one that is not a bearer token, are refused
// rather than guessed at.
func bearer(ctx context.Context) (string, bool, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	switch len(vals) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", false, status.Error(codes.Unauthenticated, "more than one authorization header")
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false, status.Error(codes.Unauthenticated, "authorization header: want \"Bearer <token>\"")
	}
	return token, true, nil
}

func (i *Interceptor) verifyBearer(ctx context.Context, token string) (principal, error) {
	if len(i.verifiers) == 0 {
		return principal{}, status.Error(codes.Unauthenticated, "this server accepts no bearer tokens: it is configured with none (kumo tokens or OIDC)")
	}
	// Each verifier is asked in turn (a kumo token is not an OIDC JWT); the
	// first that accepts the token names the subject.
	var errs []error
	for _, v := range i.verifiers {
		s, err := v.Verify(ctx, token)
		if err != nil {
			if !errors.Is(err, ErrNotMine) {
				errs = append(errs, err)
			}
			continue
		}
		if err := i.checkExternalName(s.Name); err != nil {
			return principal{}, status.Errorf(codes.Unauthenticated, "bearer token: %v", err)
		}
		return principal{subject: authz.Subject{Name: s.Name, Groups: s.Groups}}, nil
	}
	if len(errs) == 0 {
		return principal{}, status.Error(codes.Unauthenticated, "bearer token refused: no configured verifier (kumo tokens, OIDC issuer) recognises it")
	}
	return principal{}, status.Errorf(codes.Unauthenticated, "bearer token refused: %v", errors.Join(errs...))
}

// session is the Web UI user's session, from the cookie the UI server
// forwards with the calls it makes for a browser: only with the UI
// server's certificate, and only if the server runs a UI with sessions.
func (i *Interceptor) session(ctx context.Context) (principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	// The UI server's gateway passes the browser's Cookie header on as
	// grpcgateway-cookie; a forwarded-headers setting as cookie.
	cookies := append(md.Get("cookie"), md.Get("grpcgateway-cookie")...)
	if i.sessions == nil || len(cookies) == 0 {
		return principal{}, status.Error(codes.Unauthenticated, "the Web UI server's certificate carries no rights of its own: the request needs its user's credential (log in with the URL kumo server printed, or a bearer token)")
	}
	s, err := i.sessions.Verify(strings.Join(cookies, "; "))
	if err != nil {
		return principal{}, status.Errorf(codes.Unauthenticated, "Web UI session: %v", err)
	}
	if s.Name == "" {
		return principal{}, status.Error(codes.Unauthenticated, "Web UI session names no subject")
	}
	return principal{subject: authz.Subject{Name: s.Name, Groups: s.Groups}}, nil
}

// checkExternalName refuses a subject from outside the home (an operator's
// certificate, a token) that would pass for one of the home's own: its
// owner, or kumo's parts ("kumo-...", "system:..."), or a group.
func (i *Interceptor) checkExternalName(name string) error {
	return CheckExternalName(name, i.pki.Owner())
}

// CheckExternalName refuses a subject name from outside the home (an
// operator's certificate, a bearer token) that would pass for one of the
// home's own: owner, its owner, or kumo's parts, or a group. Every entry
// point that takes bearer credentials asks it (the frontend, the HTTP API).
func CheckExternalName(name, owner string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("no subject name")
	case name == owner, strings.HasPrefix(name, "kumo-"), strings.HasPrefix(name, "system:"),
		strings.HasPrefix(name, authz.GroupPrefix):
		return errors.New("subject " + name + " is reserved for the home's own certificates")
	}
	return nil
}
