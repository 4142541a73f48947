// Package bearer builds the bearer-token verifiers a kumo server's frontend
// authenticates clients with, from its configuration: kumo-issued tokens
// (internal/token, `kumo token create`) and OIDC JWTs (server/oidc). Each
// verifier, and Chain of them, has the shape the frontend's interceptor takes:
//
//	Verify(ctx, token) (runspec.Subject, error)
//
// Subjects of kumo-issued tokens are named "token:<subject>", so that a
// token can never pass for a person of the identity provider or for the
// local account (an admin who mints a token named after a colleague cannot
// approve as that colleague); OIDC subjects are the claim's value as is, and
// server/oidc refuses those that start with a reserved prefix.
package bearer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kumoproj/kumo/internal/token"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/oidc"
)

// Verifier authenticates a bearer token: the subject it stands for, or an
// error saying why it is refused (never echoing the token).
type Verifier interface {
	Verify(ctx context.Context, token string) (runspec.Subject, error)
}

// TokenSubjectPrefix starts the name of every kumo-issued token's subject.
const TokenSubjectPrefix = "token:"

// KumoTokens verifies the tokens `kumo token create` issued on one home.
type KumoTokens struct{ v *token.Verifier }

// NewKumoTokens verifies tokens against the key and records in authDir
// ($KUMO_HOME/auth), creating the key if there is none yet.
func NewKumoTokens(authDir string) (*KumoTokens, error) {
	v, err := token.NewVerifier(authDir)
	if err != nil {
		return nil, err
	}
	return &KumoTokens{v: v}, nil
}

// Verify implements Verifier.
func (k *KumoTokens) Verify(ctx context.Context, tok string) (runspec.Subject, error) {
	c, err := k.v.Verify(ctx, tok)
	if err != nil {
		return runspec.Subject{}, err
	}
	return runspec.Subject{Name: TokenSubjectPrefix + c.Subject, Groups: c.Groups}, nil
}

// Config says which bearer tokens a server accepts. The zero Config accepts
// none.
type Config struct {
	// KumoTokensDir, if set, is the auth directory ($KUMO_HOME/auth) whose
	// kumo-issued tokens are accepted.
	KumoTokensDir string
	// OIDC, if set, is the identity provider whose JWTs are accepted.
	OIDC *oidc.Config
}

// Enabled reports whether c accepts any bearer token.
func (c Config) Enabled() bool { return c.KumoTokensDir != "" || c.OIDC != nil }

// Verifiers builds c's verifiers: kumo tokens first, then OIDC. An identity
// provider that cannot be reached, or a token key that cannot be read, is an
// error: a server told to accept them does not start without them.
func (c Config) Verifiers(ctx context.Context) ([]Verifier, error) {
	var vs []Verifier
	if c.KumoTokensDir != "" {
		k, err := NewKumoTokens(c.KumoTokensDir)
		if err != nil {
			return nil, err
		}
		vs = append(vs, k)
	}
	if c.OIDC != nil {
		o, err := oidc.New(ctx, *c.OIDC)
		if err != nil {
			return nil, err
		}
		vs = append(vs, o)
	}
	return vs, nil
}

// Chain is one verifier over several: a token with the kumo token prefix
// goes to the KumoTokens verifiers only, any other to the others in turn;
// the first to accept it wins. A refusal carries every refusing verifier's
// reason.
func Chain(vs ...Verifier) Verifier { return chain(vs) }

type chain []Verifier

func (c chain) Verify(ctx context.Context, tok string) (runspec.Subject, error) {
	kumo := token.IsToken(tok)
	var errs []error
	for _, v := range c {
		if _, isKumo := v.(*KumoTokens); isKumo != kumo {
			continue
		}
		s, err := v.Verify(ctx, tok)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	switch {
	case len(errs) > 0:
		return runspec.Subject{}, errors.Join(errs...)
	case kumo:
		return runspec.Subject{}, errors.New("kumo token refused: this server does not accept kumo tokens")
	case strings.Count(tok, ".") == 2:
		return runspec.Subject{}, errors.New("bearer token refused: this server accepts no OIDC token")
	}
	return runspec.Subject{}, fmt.Errorf("bearer token refused: neither a kumo token (%s...) nor a JWT", token.Prefix)
}
