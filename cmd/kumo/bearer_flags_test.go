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
	if err != nil || cfg.Enabled() {
		t.Errorf("defaults: %+v, %v; want no bearer credential accepted", cfg, err)
	}
	cfg, err = parse("--kumo-tokens")
	if err != nil || cfg.KumoTokensDir != filepath.Join("/home/k", "auth") || cfg.OIDC != nil {
		t.Errorf("--kumo-tokens: %+v, %v; want kumo tokens of /home/k/auth, no OIDC", cfg, err)
	}
	cfg, err = parse("--oidc-issuer", "https://id.example.com", "--oidc-client-id", "kumo", "--oidc-subject-claim", "email")
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

// TestTokenFlag: --token (or KUMO_TOKEN) is the bearer credential the CLI
// dials a shared server with, as --api-key is; the two differing is an error.
func TestTokenFlag(t *testing.T) {
	t.Setenv("KUMO_TOKEN", "")
	t.Setenv("TEMPORAL_API_KEY", "")
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	apiKey := func(env string, args ...string) (string, error) {
		t.Helper()
		t.Setenv("KUMO_TOKEN", env)
		var key string
		var err error
		app := &cli.App{Flags: commonFlags(), Action: func(c *cli.Context) error {
			p, cerr := connection(c)
			key, err = p.APIKey, cerr
			return nil
		}}
		if rerr := app.Run(append([]string{"kumo"}, args...)); rerr != nil {
			t.Fatal(rerr)
		}
		return key, err
	}
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--token", "kumo_a.b"}, "kumo_a.b"},
		{"kumo_env.x", nil, "kumo_env.x"},
		{"kumo_env.x", []string{"--token", "kumo_flag.y"}, "kumo_flag.y"},
		{"", []string{"--api-key", "k"}, "k"},
		{"", []string{"--api-key", "same", "--token", "same"}, "same"},
	} {
		if got, err := apiKey(c.env, c.args...); err != nil || got != c.want {
			t.Errorf("KUMO_TOKEN=%q %q: %q, %v; want %q", c.env, c.args, got, err, c.want)
		}
	}
	if _, err := apiKey("", "--api-key", "k", "--token", "kumo_t.x"); err == nil || !strings.Contains(err.Error(), "both set and differ") {
		t.Errorf("--api-key and --token differing: %v", err)
	}
}
