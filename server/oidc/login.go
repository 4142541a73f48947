package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/kumoproj/kumo/runspec"
)

// Login is the authorization code flow through which a person logs in with a
// browser (kumo server's Web UI): AuthURL sends the browser to the issuer;
// Exchange redeems the code the issuer sends back for tokens, and the ID
// token is verified exactly as a bearer token is (issuer, audience,
// signature, expiry, subject and groups claims), plus the login's nonce.
//
// The flow uses PKCE (S256) as well as the client secret, so a code that
// leaks on its way back cannot be redeemed by someone without the verifier
// that only the browser's flow cookie holds.
type Login struct {
	v     *Verifier
	oauth oauth2.Config
}

// Login returns the flow for this verifier's client, with its secret, whose
// issuer sends browsers back to redirectURL (registered with the issuer as
// one of the client's redirect URIs).
func (v *Verifier) Login(clientSecret, redirectURL string) (*Login, error) {
	if clientSecret == "" {
		return nil, errors.New("oidc: the client secret is required for the Web UI's login")
	}
	u, err := url.Parse(redirectURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oidc: callback URL %q: want an http(s) URL with no query or fragment", redirectURL)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("oidc: callback URL %s is plain http on a host that is not loopback: the code and the session cookie would cross the network in clear; use https", redirectURL)
	}
	if v.endpoint.AuthURL == "" || v.endpoint.TokenURL == "" {
		return nil, fmt.Errorf("oidc: issuer %s publishes no authorization or token endpoint", v.cfg.Issuer)
	}
	return &Login{v: v, oauth: oauth2.Config{
		ClientID: v.cfg.ClientID, ClientSecret: clientSecret, Endpoint: v.endpoint,
		RedirectURL: redirectURL, Scopes: []string{"openid", "profile", "email"},
	}}, nil
}

// RedirectURL is where the issuer sends browsers back.
func (l *Login) RedirectURL() string { return l.oauth.RedirectURL }

// AuthURL is the issuer's authorization URL for one login: state and nonce
// are random values the caller keeps for the callback, pkceVerifier a
// random PKCE code verifier (oauth2.GenerateVerifier).
func (l *Login) AuthURL(state, nonce, pkceVerifier string) string {
	return l.oauth.AuthCodeURL(state, oauth2.SetAuthURLParam("nonce", nonce), oauth2.S256ChallengeOption(pkceVerifier))
}

// Exchange redeems code with pkceVerifier and returns the subject of the ID
// token, which must carry nonce, and when that token expires. A refusal by
// the issuer or of the token is an error saying which, never echoing a
// token.
func (l *Login) Exchange(ctx context.Context, code, pkceVerifier, nonce string) (runspec.Subject, time.Time, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, l.v.client)
	tok, err := l.oauth.Exchange(ctx, code, oauth2.VerifierOption(pkceVerifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return runspec.Subject{}, time.Time{}, fmt.Errorf("oidc: the issuer refused the login's code: %s %s", re.ErrorCode, strings.TrimSpace(re.ErrorDescription))
		}
		return runspec.Subject{}, time.Time{}, fmt.Errorf("oidc: redeem the login's code at %s: %w", l.oauth.Endpoint.TokenURL, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return runspec.Subject{}, time.Time{}, errors.New("oidc: the issuer returned no ID token (is the openid scope allowed for this client?)")
	}
	s, idTok, err := l.v.verify(ctx, raw)
	if err != nil {
		return runspec.Subject{}, time.Time{}, err
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idTok.Nonce), []byte(nonce)) != 1 {
		return runspec.Subject{}, time.Time{}, &Error{BadClaims, "the ID token's nonce is not this login's (a replayed token?)"}
	}
	return s, idTok.Expiry, nil
}
