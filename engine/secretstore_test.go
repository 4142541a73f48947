package engine

import (
	"encoding/base64"
	"strings"
	"testing"
)

// References parse as Kusion parses them (the last segment is the property,
// the rest the name, ?version= the version); what could read elsewhere than
// the name says is refused.
func TestParseSecretRef(t *testing.T) {
	for in, want := range map[string]SecretRef{
		"ref://db":                         {Name: "db"},
		"ref://db/password":                {Name: "db", Property: "password"},
		"ref://apps/web/db/password":       {Name: "apps/web/db", Property: "password"},
		"ref://secret/data/db/password":    {Name: "secret/data/db", Property: "password"},
		"ref://prod/db/password?version=3": {Name: "prod/db", Property: "password", Version: "3"},
		" ref://prod/db/p?version=uuid/ab": {Name: "prod/db", Property: "p", Version: "uuid/ab"},
	} {
		got, err := ParseSecretRef(in)
		if err != nil || got != want {
			t.Errorf("ParseSecretRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{
		"ref://", "ref:///x", "ref://a%2Fb/c", "ref://a//b", "ref://a/../b", "ref://a/./b", "ref://a/%2e%2e/b", "ref://a/b?x=1",
		"ref://a/b?version=1&version=2", "ref://a/b?version=", "ref://a/b#frag", "ref://user@a/b", "http://a/b",
	} {
		if got, err := ParseSecretRef(in); err == nil {
			t.Errorf("ParseSecretRef(%q) = %+v, want an error", in, got)
		}
	}
}

func secretWith(id, field string, values map[string]any) Resource {
	return Resource{ID: id, Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": "demo", "name": strings.Split(id, ":")[3]},
		field:      values,
	}}
}

// A reference is a whole value of a v1 Secret's data (base64-encoded, as
// Kusion writes it, or as written) or stringData; values are put back
// base64-encoded in data and as they are in stringData, the resource given
// unchanged.
func TestSecretRefsOfAndValues(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	r := secretWith("v1:Secret:demo:a", "data", map[string]any{
		"kusion": b64([]byte("ref://prod/db/password")), "plain": "ref://prod/db/user", "z": b64([]byte("x")),
	})
	r.Attributes["stringData"] = map[string]any{"token": "ref://prod/api?version=2", "note": "see ref://x"}
	refs, err := SecretRefsOf(&r)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range refs {
		paths = append(paths, f.Path()+"="+f.Ref.String())
	}
	want := "data.kusion=ref://prod/db/password data.plain=ref://prod/db/user stringData.token=ref://prod/api?version=2"
	if got := strings.Join(paths, " "); got != want {
		t.Fatalf("refs = %s\nwant %s", got, want)
	}
	out := WithSecretValues(r, refs, [][]byte{[]byte("pw"), []byte("admin"), []byte("tok")})
	data := out.Attributes["data"].(map[string]any)
	if data["kusion"] != b64([]byte("pw")) || data["plain"] != b64([]byte("admin")) || data["z"] != b64([]byte("x")) {
		t.Errorf("data = %v", data)
	}
	if sd := out.Attributes["stringData"].(map[string]any); sd["token"] != "tok" || sd["note"] != "see ref://x" {
		t.Errorf("stringData = %v", sd)
	}
	if r.Attributes["data"].(map[string]any)["plain"] != "ref://prod/db/user" || r.Attributes["stringData"].(map[string]any)["token"] != "ref://prod/api?version=2" {
		t.Error("WithSecretValues changed the resource it was given")
	}
	cm := r
	cm.Attributes = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "ref://a/b"}}
	if refs, err := SecretRefsOf(&cm); refs != nil || err != nil {
		t.Errorf("a ConfigMap's ref:// text: %v, %v", refs, err)
	}
}

// Validate accepts well-formed references (the worker resolves them) and
// names the resource and field of a malformed one, and a spec with
// references whose secretStore kumo cannot read.
func TestValidateSecretStoreRefs(t *testing.T) {
	s := &Spec{Resources: []Resource{
		secretWith("v1:Secret:demo:a", "data", map[string]any{"k": "ref://a/k"}),
		secretWith("v1:Secret:demo:b", "stringData", map[string]any{"p": "ref://b/../p"}),
	}}
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), `v1:Secret:demo:b: stringData.p: segment ".."`) || strings.Contains(err.Error(), "demo:a") {
		t.Fatalf("Validate = %v", err)
	}
	s.Resources = s.Resources[:1]
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate of a well-formed reference: %v", err)
	}
	s.SecretStore = map[string]any{"provider": map[string]any{"alicloud": map[string]any{"region": "x"}}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "secretStore.provider.alicloud: kumo reads secrets from vault and aws stores only") {
		t.Fatalf("Validate with an alicloud store = %v", err)
	}
}

func vaultWS(server, path, version string, allowed ...string) *Workspace {
	return &Workspace{Name: "dev", SecretStore: &WorkspaceSecretStore{
		Provider:     SecretProvider{Vault: &VaultStore{Server: server, Path: path, Version: version}},
		AllowedNames: allowed,
	}}
}

// The store is always the workspace's: a spec may describe it (in its own
// spelling) but never name another server, mount, version, provider,
// region or profile; a workspace without a store reads nothing.
func TestChooseSecretStore(t *testing.T) {
	ws := vaultWS("https://vault.example.com:8200", "secret", "", "*")
	vault := func(fields map[string]any) any {
		return map[string]any{"provider": map[string]any{"vault": fields}}
	}
	for _, ok := range []any{nil, vault(map[string]any{"server": "https://vault.example.com:8200/", "path": "/secret/", "version": "v2"})} {
		if got, err := ChooseSecretStore(ok, ws); err != nil || got != ws.SecretStore {
			t.Errorf("ChooseSecretStore(%v) = %v, %v", ok, got, err)
		}
	}
	for _, bad := range []any{
		vault(map[string]any{"server": "https://attacker.example:8200", "path": "secret"}),
		vault(map[string]any{"server": "https://vault.example.com:8200", "path": "other"}),
		vault(map[string]any{"server": "https://vault.example.com:8200", "path": "secret", "version": "v1"}),
		vault(map[string]any{"server": "https://vault.example.com:8200"}),
		map[string]any{"provider": map[string]any{"aws": map[string]any{"region": "us-east-1"}}},
	} {
		_, err := ChooseSecretStore(bad, ws)
		if err == nil || !strings.Contains(err.Error(), "is not workspace dev's (vault https://vault.example.com:8200 (mount secret, kv v2)): a spec may name its workspace's store, never another") {
			t.Errorf("ChooseSecretStore(%v) = %v", bad, err)
		}
	}
	aws := &Workspace{Name: "prod", SecretStore: &WorkspaceSecretStore{Provider: SecretProvider{AWS: &AWSStore{Region: "eu-west-1"}}, AllowedNames: []string{"*"}}}
	if _, err := ChooseSecretStore(map[string]any{"provider": map[string]any{"aws": map[string]any{"region": "eu-west-1", "profile": "admin"}}}, aws); err == nil {
		t.Error("a spec chose an AWS profile the workspace does not name")
	}
	if _, err := ChooseSecretStore(nil, &Workspace{Name: "dev"}); err == nil || !strings.Contains(err.Error(), "workspace dev has no secretStore") {
		t.Errorf("no workspace store: %v", err)
	}
	if _, err := ChooseSecretStore(vault(map[string]any{"server": "https://x"}), &Workspace{Name: "dev"}); err == nil {
		t.Error("a spec's store was used in a workspace that has none")
	}
}

// allowedNames are checked when the workspace is saved, and match a Vault
// secret as "<mount>/<path>" however the reference spells the mount.
func TestWorkspaceSecretStoreNames(t *testing.T) {
	for _, bad := range []*WorkspaceSecretStore{
		{Provider: SecretProvider{Vault: &VaultStore{Server: "https://v"}}},
		{Provider: SecretProvider{Vault: &VaultStore{Server: "https://v"}}, AllowedNames: []string{"a/*/b"}},
		{Provider: SecretProvider{Vault: &VaultStore{Server: "https://v"}}, AllowedNames: []string{"a/../*"}},
		{Provider: SecretProvider{Vault: &VaultStore{Server: "ftp://v"}}, AllowedNames: []string{"*"}},
		{Provider: SecretProvider{Vault: &VaultStore{Server: "https://v", Version: "v3"}}, AllowedNames: []string{"*"}},
		{Provider: SecretProvider{AWS: &AWSStore{}}, AllowedNames: []string{"*"}},
		{Provider: SecretProvider{}, AllowedNames: []string{"*"}},
	} {
		if err := bad.Validate("secretStore"); err == nil {
			t.Errorf("Validate(%+v) = nil", bad)
		}
	}
	ws := vaultWS("https://v", "secret", "v2", "secret/apps/web/*", "secret/shared/db").SecretStore
	if err := ws.Validate("secretStore"); err != nil {
		t.Fatal(err)
	}
	for name, allowed := range map[string]bool{
		"apps/web/db": true, "secret/apps/web/db": true, "secret/data/apps/web/x/y": true, "shared/db": true,
		"apps/webx/db": false, "shared/db2": false, "apps/db": false, "other/apps/web/db": false,
	} {
		n, err := ws.SecretName(SecretRef{Name: name})
		if err != nil {
			t.Fatalf("SecretName(%s): %v", name, err)
		}
		if ws.Allows(n) != allowed {
			t.Errorf("%s (as %s): allowed = %v, want %v", name, n, !allowed, allowed)
		}
	}
	noMount := vaultWS("https://v", "", "", "kv/apps/*").SecretStore
	for name, want := range map[string]string{"kv/apps/db": "kv/apps/db", "kv/data/apps/db": "kv/apps/db"} {
		if n, err := noMount.SecretName(SecretRef{Name: name}); err != nil || n != want {
			t.Errorf("SecretName(%s) without a mount = %q, %v; want %q", name, n, err, want)
		}
	}
	if _, err := noMount.SecretName(SecretRef{Name: "db"}); err == nil {
		t.Error("a one-segment name without a mount was taken")
	}
}
