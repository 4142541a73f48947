package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/bearer"
	"github.com/kumoproj/kumo/server/oidc"
)

// bearerFlags are kumo server's flags for the bearer tokens its frontend
// accepts: kumo-issued tokens and an OIDC provider's JWTs.
func bearerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "kumo-tokens", Usage: "accept the tokens kumo token create issues on this home (revocations apply at once)", EnvVars: []string{"KUMO_ACCEPT_TOKENS"}},
		&cli.StringFlag{Name: "oidc-issuer", Usage: "accept JWTs of this OpenID Connect issuer (its URL exactly as tokens carry it in iss; https, or http on loopback)", EnvVars: []string{"KUMO_OIDC_ISSUER"}},
		&cli.StringFlag{Name: "oidc-client-id", Usage: "the audience OIDC tokens must be issued for (required with --oidc-issuer)", EnvVars: []string{"KUMO_OIDC_CLIENT_ID"}},
		&cli.StringFlag{Name: "oidc-subject-claim", Usage: "claim naming the subject: sub, or email (then email_verified must be true), or another string claim", Value: oidc.DefaultSubjectClaim, EnvVars: []string{"KUMO_OIDC_SUBJECT_CLAIM"}},
		&cli.StringFlag{Name: "oidc-groups-claim", Usage: "claim holding the subject's groups (a string or a list of strings)", Value: oidc.DefaultGroupsClaim, EnvVars: []string{"KUMO_OIDC_GROUPS_CLAIM"}},
		&cli.StringFlag{Name: "oidc-ca-file", Usage: "PEM bundle trusted for the issuer's TLS certificate (default: the system's)", EnvVars: []string{"KUMO_OIDC_CA_FILE"}},
		&cli.StringFlag{Name: "oidc-client-secret-file", Usage: "file holding the client's secret at the issuer: people then log in to the Web UI through the issuer (single sign-on)", EnvVars: []string{"KUMO_OIDC_CLIENT_SECRET_FILE"}},
		&cli.StringFlag{Name: "oidc-callback-url", Usage: "where the issuer sends browsers back after the Web UI's login, registered as the client's redirect URI, on the Web UI's host (default: the codec endpoint's URL + " + server.SSOCallbackPath + "; fix its port with --codec-address)", EnvVars: []string{"KUMO_OIDC_CALLBACK_URL"}},
	}
}

// bearerConfig reads bearerFlags for a server on home. An --oidc-* flag
// without --oidc-issuer is an error, never ignored.
func bearerConfig(c *cli.Context, home string) (bearer.Config, error) {
	var cfg bearer.Config
	if c.Bool("kumo-tokens") {
		abs, err := filepath.Abs(home)
		if err != nil {
			return cfg, err
		}
		cfg.KumoTokensDir = filepath.Join(abs, "auth")
	}
	issuer := c.String("oidc-issuer")
	if issuer == "" {
		for _, name := range []string{"oidc-client-id", "oidc-subject-claim", "oidc-groups-claim", "oidc-ca-file", "oidc-client-secret-file", "oidc-callback-url"} {
			if c.IsSet(name) {
				return cfg, fmt.Errorf("--%s is set but --oidc-issuer is not: say which issuer's tokens to accept", name)
			}
		}
		return cfg, nil
	}
	cfg.OIDC = &oidc.Config{
		Issuer: issuer, ClientID: c.String("oidc-client-id"),
		SubjectClaim: c.String("oidc-subject-claim"), GroupsClaim: c.String("oidc-groups-claim"),
		CAFile: c.String("oidc-ca-file"),
	}
	if err := cfg.OIDC.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// ssoConfig reads the Web UI's single sign-on flags: nil without
// --oidc-client-secret-file. verifiers are the server's (bearerConfig's
// Verifiers); the OIDC one serves the login too.
func ssoConfig(c *cli.Context, verifiers []bearer.Verifier) (*server.SSO, error) {
	file := c.String("oidc-client-secret-file")
	if file == "" {
		if c.IsSet("oidc-callback-url") {
			return nil, errors.New("--oidc-callback-url is set but --oidc-client-secret-file is not: the Web UI's login needs the client's secret")
		}
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--oidc-client-secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(data))
	if secret == "" || strings.ContainsAny(secret, "\n\r") {
		return nil, fmt.Errorf("--oidc-client-secret-file %s: want the secret alone on one line", file)
	}
	var v *oidc.Verifier
	for _, x := range verifiers {
		if o, ok := x.(*oidc.Verifier); ok {
			v = o
		}
	}
	if v == nil {
		return nil, errors.New("--oidc-client-secret-file needs --oidc-issuer and --oidc-client-id")
	}
	return &server.SSO{Verifier: v, ClientSecret: secret, CallbackURL: c.String("oidc-callback-url")}, nil
}
