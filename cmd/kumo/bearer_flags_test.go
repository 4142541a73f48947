package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/server/bearer"
)

// TestBearerConfig: the server's --kumo-tokens and --oidc-* flags become a
// bearer.Config; an OIDC flag without an issuer, or an issuer that cannot be
// used, is an error.
func TestBearerConfig(t *testing.T) {
	parse := func(args ...string) (bearer.Config, error) {
		var cfg bearer.Config
		var err error
		app := &cli.App{Flags: bearerFlags(), Action: func(c *cli.Context) error {
			cfg, err = bearerConfig(c, "/home/k")
			return nil
		}}
		if rerr := app.Run(append([]string{"kumo"}, args...)); rerr != nil {
			t.Fatal(rerr)
		}
		return cfg, err
	}
	cfg, err := parse()
	if err != nil || cfg.KumoTokensDir != filepath.Join("/home/k", "auth") || cfg.OIDC != nil {
		t.Errorf("defaults: %+v, %v; want kumo tokens of /home/k/auth, no OIDC", cfg, err)
	}
	cfg, err = parse("--kumo-tokens=false", "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "kumo", "--oidc-subject-claim", "email")
	if err != nil || cfg.KumoTokensDir != "" || cfg.OIDC == nil || cfg.OIDC.Issuer != "https://id.example.com" ||
		cfg.OIDC.ClientID != "kumo" || cfg.OIDC.SubjectClaim != "email" || cfg.OIDC.GroupsClaim != "groups" {
		t.Errorf("OIDC flags: %+v (%+v), %v", cfg, cfg.OIDC, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--oidc-client-id", "kumo"}, "--oidc-client-id is set but --oidc-issuer is not"},
		{[]string{"--oidc-issuer", "https://id.example.com"}, "--oidc-client-id"},
		{[]string{"--oidc-issuer", "http://id.example.com", "--oidc-client-id", "kumo"}, "plain http"},
	} {
		if _, err := parse(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
