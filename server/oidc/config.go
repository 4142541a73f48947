// Package oidc verifies OpenID Connect JWTs for the kumo frontend: ID tokens
// (or JWT access tokens) of one issuer, for one audience, mapped to a
// runspec.Subject by a subject claim and a groups claim.
//
// The issuer's keys come from its discovery document's JWKS and follow its
// key rotation as github.com/coreos/go-oidc does: a token signed by a key not
// yet seen makes it fetch the key set again (keyset.go: at most once a
// second, and never for a known key whose signature does not verify). A token of another issuer or
// audience, an expired one, an unsigned one (alg "none") or one signed by a
// key the issuer does not publish is refused with an error saying which.
package oidc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Config says which tokens a server accepts. Issuer and ClientID are
// required; the rest have defaults.
type Config struct {
	// Issuer is the issuer URL, exactly as tokens carry it in "iss"; its
	// discovery document is Issuer + "/.well-known/openid-configuration".
	Issuer string
	// ClientID is the audience: a token whose "aud" does not hold it is
	// refused.
	ClientID string
	// SubjectClaim names the claim that becomes the subject's name: "sub"
	// (default) or another string claim such as "email". With "email" the
	// token must also carry "email_verified": true.
	SubjectClaim string
	// GroupsClaim names the claim holding the subject's groups (a string or
	// a list of strings): default "groups". A token without it has no
	// groups.
	GroupsClaim string
	// CAFile is a PEM bundle trusted for the issuer's TLS certificate, for a
	// private issuer (default: the system's roots).
	CAFile string
}

// Defaults for the claims.
const (
	DefaultSubjectClaim = "sub"
	DefaultGroupsClaim  = "groups"
)

// withDefaults fills the claim names left empty.
func (c Config) withDefaults() Config {
	if c.SubjectClaim == "" {
		c.SubjectClaim = DefaultSubjectClaim
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	return c
}

// Validate checks c without contacting the issuer. The issuer must be https,
// or http on a loopback address: keys fetched over plain HTTP from another
// host could be replaced on the way, and with them every identity.
func (c Config) Validate() error {
	if c.Issuer == "" {
		return errors.New("oidc: the issuer URL is required (--oidc-issuer)")
	}
	u, err := url.Parse(c.Issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("oidc: issuer %q is not an http(s) URL", c.Issuer)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("oidc: issuer %s is plain http on a host that is not loopback: its signing keys could be replaced in transit; use https", c.Issuer)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("oidc: issuer %q has a query or fragment; an issuer URL has neither", c.Issuer)
	}
	if c.ClientID == "" {
		return errors.New("oidc: the client ID (the audience tokens must be issued for) is required (--oidc-client-id)")
	}
	for what, claim := range map[string]string{"subject": c.SubjectClaim, "groups": c.GroupsClaim} {
		if strings.ContainsAny(claim, " \t\n") {
			return fmt.Errorf("oidc: %s claim %q: a claim name has no spaces", what, claim)
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
