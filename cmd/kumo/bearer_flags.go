package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

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
		for _, name := range []string{"oidc-client-id", "oidc-subject-claim", "oidc-groups-claim", "oidc-ca-file"} {
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
