package client

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadConnection: the temporal CLI's profile, then TEMPORAL_*, then flags.
func TestLoadConnection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "temporal.toml")
	toml := `
[profile.default]
address = "default.example:7233"

[profile.cloud]
address = "cloud.example:7233"
namespace = "team.acct"
api_key = "from-file"
[profile.cloud.tls]
server_name = "cloud.example"
`
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_PROFILE", "TEMPORAL_TLS_SERVER_NAME"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", file)

	p, err := LoadConnection(ConnectionFlags{})
	if err != nil || p.Address != "default.example:7233" || p.Namespace != "default" || p.TLS != nil {
		t.Errorf("default profile: %+v, %v", p, err)
	}
	t.Setenv("TEMPORAL_PROFILE", "cloud")
	t.Setenv("TEMPORAL_API_KEY", "from-env")
	p, err = LoadConnection(ConnectionFlags{})
	if err != nil || p.Address != "cloud.example:7233" || p.Namespace != "team.acct" || p.APIKey != "from-env" || p.TLS == nil || p.TLS.ServerName != "cloud.example" {
		t.Errorf("cloud profile with TEMPORAL_API_KEY: %+v, %v", p, err)
	}
	p, err = LoadConnection(ConnectionFlags{Address: "flag:7233", Namespace: "ns", APIKey: "from-flag", TLSCAPath: "/ca.pem", TLSServerName: "flag"})
	if err != nil || p.Address != "flag:7233" || p.Namespace != "ns" || p.APIKey != "from-flag" || p.TLS.ServerCACertPath != "/ca.pem" || p.TLS.ServerName != "flag" {
		t.Errorf("flags: %+v, %v", p, err)
	}
	if _, err := LoadConnection(ConnectionFlags{Profile: "missing"}); err == nil {
		t.Error("a profile missing from the file is accepted")
	}
}
