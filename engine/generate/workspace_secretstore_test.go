package generate

import (
	"strings"
	"testing"
)

// A workspace's secretStore is checked when the workspace is saved: Kusion's
// provider fields, one provider, and the names its specs may read.
func TestParseWorkspaceSecretStore(t *testing.T) {
	ws, err := ParseWorkspace([]byte(`secretStore:
  provider:
    vault: {server: "https://vault.example.com:8200", path: secret, version: v2}
  allowedNames: [secret/apps/*]
`), "ws.yaml", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if s := ws.SecretStore; s == nil || s.Provider.Vault == nil || s.Provider.Vault.Path != "secret" || s.AllowedNames[0] != "secret/apps/*" {
		t.Fatalf("secretStore = %+v", ws.SecretStore)
	}
	for text, want := range map[string]string{
		"secretStore:\n  provider:\n    vault: {server: https://v}\n":                                              "ws.yaml: secretStore.allowedNames: required",
		"secretStore:\n  provider:\n    vault: {server: https://v, token: x}\n  allowedNames: ['*']\n":             `token`,
		"secretStore:\n  provider:\n    aws: {region: x}\n    vault: {server: https://v}\n  allowedNames: ['*']\n": "ws.yaml: secretStore.provider: names both vault and aws",
		"secretStore:\n  provider:\n    aws: {}\n  allowedNames: ['*']\n":                                          "ws.yaml: secretStore.provider.aws.region: required",
		"secretStore:\n  provider:\n    vault: {server: https://v}\n  allowedNames: ['a/*/b']\n":                   `ws.yaml: secretStore.allowedNames[0]: "a/*/b": want "*", "prefix/*" or an exact name`,
	} {
		_, err := ParseWorkspace([]byte(text), "ws.yaml", "dev")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", text, err, want)
		}
	}
}
