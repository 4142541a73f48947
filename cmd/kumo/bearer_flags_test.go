package main

import (
	"os"
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
		{[]string{"--oidc-client-secret-file", "/s"}, "--oidc-client-secret-file is set but --oidc-issuer is not"},
		{[]string{"--oidc-issuer", "https://id.example.com"}, "--oidc-client-id"},
		{[]string{"--oidc-issuer", "http://id.example.com", "--oidc-client-id", "kumo"}, "plain http"},
	} {
		if _, err := parse(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestSSOConfig: the Web UI's single sign-on needs the client secret in a
// file of one line, and the OIDC verifier; a callback URL without a secret
// is an error, never ignored.
func TestSSOConfig(t *testing.T) {
	dir := t.TempDir()
	empty, twoLines := filepath.Join(dir, "empty"), filepath.Join(dir, "two")
	os.WriteFile(empty, []byte("\n"), 0o600)
	os.WriteFile(twoLines, []byte("a\nb\n"), 0o600)
	good := filepath.Join(dir, "secret")
	os.WriteFile(good, []byte("s3cret\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--oidc-callback-url", "http://127.0.0.1:1/cb"}, "--oidc-callback-url is set but --oidc-client-secret-file is not"},
		{[]string{"--oidc-client-secret-file", empty}, "want the secret alone on one line"},
		{[]string{"--oidc-client-secret-file", twoLines}, "want the secret alone on one line"},
		{[]string{"--oidc-client-secret-file", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"--oidc-client-secret-file", good}, "needs --oidc-issuer"},
	} {
		var err error
		app := &cli.App{Flags: bearerFlags(), Action: func(ctx *cli.Context) error {
			_, err = ssoConfig(ctx, nil)
			return nil
		}}
		if rerr := app.Run(append([]string{"kumo"}, c.args...)); rerr != nil {
			t.Fatal(rerr)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	app := &cli.App{Flags: bearerFlags(), Action: func(ctx *cli.Context) error {
		sso, err := ssoConfig(ctx, nil)
		if sso != nil || err != nil {
			t.Errorf("no SSO flags: %+v, %v; want none", sso, err)
		}
		return nil
	}}
	if err := app.Run([]string{"kumo"}); err != nil {
		t.Fatal(err)
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
