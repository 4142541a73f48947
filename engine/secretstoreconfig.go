package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SecretProvider is Kusion's secretStore.provider: exactly one of its stores,
// with Kusion's field names. kumo reads HashiCorp Vault (KV v1 and v2) and AWS
// Secrets Manager; Kusion's other providers (alicloud, azure, viettelcloud,
// onpremises, fake) are refused by name.
type SecretProvider struct {
	Vault *VaultStore `json:"vault,omitempty"`
	AWS   *AWSStore   `json:"aws,omitempty"`
}

// VaultStore is Kusion's provider.vault. The token is the worker's
// (VAULT_SERVER_TOKEN, else VAULT_TOKEN, in its environment), never the
// spec's or the workspace file's.
type VaultStore struct {
	// Server is the Vault address, "https://vault.example.com:8200".
	Server string `json:"server"`
	// Path is the KV mount ("secret"); empty: a reference's first segment.
	Path string `json:"path,omitempty"`
	// Version is the KV engine version, "v1" or "v2" (the default).
	Version string `json:"version,omitempty"`
}

// AWSStore is Kusion's provider.aws: AWS Secrets Manager in Region, with the
// worker's credentials (the SDK's default chain: environment, shared files,
// instance roles), from Profile when set.
type AWSStore struct {
	Region  string `json:"region"`
	Profile string `json:"profile,omitempty"`
}

// WorkspaceSecretStore is a workspace's secretStore: the store its specs'
// references read (Kusion's fields), and the secrets they may read. Only the
// workspace's administrators set it; a spec's own secretStore may name this
// store (Kusion copies the workspace's into every spec) but never another.
type WorkspaceSecretStore struct {
	Provider SecretProvider `json:"provider"`
	// AllowedNames are the secrets a reference may read, as patterns: "*"
	// (any), "apps/web/*" (any name under apps/web/), or an exact name. A
	// Vault name is "<mount>/<path>" as `vault kv get` takes it
	// ("secret/apps/web/db"); an AWS name is the secret's name. Required: the
	// worker's credentials may read more than this workspace's specs may.
	AllowedNames []string `json:"allowedNames"`
}

// kusionProviders are the providers Kusion knows that kumo does not read.
var kusionProviders = []string{"alicloud", "azure", "fake", "onpremises", "viettelcloud"}

// ParseSecretStore reads a spec's secretStore (untyped, as the spec holds
// it) strictly: provider with one store kumo reads, Kusion's fields only.
// path prefixes errors ("secretStore").
func ParseSecretStore(v any, path string) (SecretProvider, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return SecretProvider{}, fmt.Errorf("%s: want a mapping with provider", path)
	}
	for k := range m {
		if k != "provider" {
			return SecretProvider{}, fmt.Errorf("%s.%s: unknown field (a secretStore has provider only)", path, k)
		}
	}
	raw, err := json.Marshal(m["provider"])
	if err != nil {
		return SecretProvider{}, fmt.Errorf("%s.provider: %v", path, err)
	}
	var names map[string]json.RawMessage
	if err := json.Unmarshal(raw, &names); err != nil || names == nil {
		return SecretProvider{}, fmt.Errorf("%s.provider: want a mapping naming one store (vault or aws)", path)
	}
	for k := range names {
		if slices.Contains(kusionProviders, k) {
			return SecretProvider{}, fmt.Errorf("%s.provider.%s: kumo reads secrets from vault and aws stores only", path, k)
		}
	}
	var p SecretProvider
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return SecretProvider{}, fmt.Errorf("%s.provider: %v", path, err)
	}
	return p, p.Validate(path + ".provider")
}

// Validate checks p names exactly one store with the fields it needs.
func (p SecretProvider) Validate(path string) error {
	switch {
	case p.Vault != nil && p.AWS != nil:
		return fmt.Errorf("%s: names both vault and aws; a secret store has one provider", path)
	case p.Vault != nil:
		u, err := url.Parse(p.Vault.Server)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("%s.vault.server: %q: want the Vault address, https://host:port", path, p.Vault.Server)
		}
		if v := p.Vault.Version; v != "" && v != "v1" && v != "v2" {
			return fmt.Errorf("%s.vault.version: %q: want v1 or v2", path, v)
		}
		for _, seg := range strings.Split(strings.Trim(p.Vault.Path, "/"), "/") {
			if p.Vault.Path != "" && (seg == "" || seg == "." || seg == "..") {
				return fmt.Errorf("%s.vault.path: %q: want a KV mount path such as secret", path, p.Vault.Path)
			}
		}
	case p.AWS != nil:
		if p.AWS.Region == "" {
			return fmt.Errorf("%s.aws.region: required (us-east-1, ...)", path)
		}
	default:
		return fmt.Errorf("%s: names no store (want vault or aws)", path)
	}
	return nil
}

// Normalized is p with defaults filled in and spellings unified, for comparing
// two descriptions of one store.
func (p SecretProvider) Normalized() SecretProvider {
	if p.Vault != nil {
		v := *p.Vault
		v.Server = strings.TrimRight(v.Server, "/")
		v.Path = strings.Trim(v.Path, "/")
		if v.Version == "" {
			v.Version = "v2"
		}
		p.Vault = &v
	}
	if p.AWS != nil {
		a := *p.AWS
		p.AWS = &a
	}
	return p
}

// String names the store in errors: "vault http://127.0.0.1:8200 (mount
// secret, kv v2)", "aws secrets manager us-east-1 (profile ops)".
func (p SecretProvider) String() string {
	n := p.Normalized()
	switch {
	case n.Vault != nil:
		mount := n.Vault.Path
		if mount == "" {
			mount = "from the reference"
		}
		return fmt.Sprintf("vault %s (mount %s, kv %s)", n.Vault.Server, mount, n.Vault.Version)
	case n.AWS != nil:
		s := "aws secrets manager " + n.AWS.Region
		if n.AWS.Profile != "" {
			s += " (profile " + n.AWS.Profile + ")"
		}
		return s
	}
	return "no store"
}

// Validate checks a workspace's secretStore (path: "secretStore").
func (w *WorkspaceSecretStore) Validate(path string) error {
	if w == nil {
		return nil
	}
	if err := w.Provider.Validate(path + ".provider"); err != nil {
		return err
	}
	if len(w.AllowedNames) == 0 {
		return fmt.Errorf(`%s.allowedNames: required: the secrets this workspace's specs may read ("*" for any the worker's credentials can read)`, path)
	}
	for i, p := range w.AllowedNames {
		body := strings.TrimSuffix(p, "/*")
		if p == "*" {
			continue
		}
		if body == "" || strings.Contains(body, "*") || strings.HasPrefix(body, "/") || strings.HasSuffix(body, "/") {
			return fmt.Errorf(`%s.allowedNames[%d]: %q: want "*", "prefix/*" or an exact name`, path, i, p)
		}
		for _, seg := range strings.Split(body, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Errorf(`%s.allowedNames[%d]: %q: empty, "." and ".." segments never name a secret`, path, i, p)
			}
		}
	}
	return nil
}

// Allows reports whether a reference may read the secret called name (as
// AllowedNames spells names: SecretName).
func (w *WorkspaceSecretStore) Allows(name string) bool {
	for _, p := range w.AllowedNames {
		switch {
		case p == "*", p == name:
			return true
		case strings.HasSuffix(p, "/*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")):
			return true
		}
	}
	return false
}

// SecretName is the name of the secret ref reads, as AllowedNames spells it:
// a Vault secret's "<mount>/<path>", an AWS secret's name.
func (w *WorkspaceSecretStore) SecretName(ref SecretRef) (string, error) {
	if v := w.Provider.Normalized().Vault; v != nil {
		mount, secret, err := v.SecretPath(ref.Name)
		if err != nil {
			return "", err
		}
		return mount + "/" + secret, nil
	}
	return ref.Name, nil
}

// SecretPath splits a reference's name into the KV mount and the secret's
// path inside it, as Kusion builds the API path: with a configured mount
// (Path), a name that starts with "<mount>/" (and, in KV v2, then "data/")
// has that cut, the rest is the secret's path; without one, the first
// segment is the mount (and, in KV v2, a "data" segment after it is cut).
// v must be Normalized.
func (v *VaultStore) SecretPath(name string) (mount, secret string, err error) {
	mount, rest := v.Path, name
	if mount != "" {
		rest = strings.TrimPrefix(rest, mount+"/")
	} else {
		var ok bool
		if mount, rest, ok = strings.Cut(name, "/"); !ok {
			return "", "", fmt.Errorf("secret %q names no path inside a mount (the store has no path: the first segment is the mount)", name)
		}
	}
	if v.Version == "v2" && strings.HasPrefix(rest, "data/") && (v.Path == "" || rest != name) {
		rest = strings.TrimPrefix(rest, "data/")
	}
	if rest == "" {
		return "", "", errors.New("the reference names no secret")
	}
	return mount, rest, nil
}

// ChooseSecretStore decides which store a spec's references read in
// workspace ws: the workspace's, which the spec's own secretStore (when it
// has one) must describe exactly, provider and location alike. A spec
// chooses nothing the workspace did not: the worker's store credentials go
// only where the workspace's administrators sent them.
func ChooseSecretStore(specStore any, ws *Workspace) (*WorkspaceSecretStore, error) {
	if ws == nil || ws.SecretStore == nil {
		return nil, fmt.Errorf("workspace %s has no secretStore: its administrators configure one (README, Secret stores); a spec cannot bring its own", workspaceName(ws))
	}
	if specStore == nil {
		return ws.SecretStore, nil
	}
	p, err := ParseSecretStore(specStore, "secretStore")
	if err != nil {
		return nil, err
	}
	mine, theirs := p.Normalized(), ws.SecretStore.Provider.Normalized()
	a, _ := json.Marshal(mine)
	b, _ := json.Marshal(theirs)
	if !bytes.Equal(a, b) {
		return nil, fmt.Errorf("the spec's secretStore (%s) is not workspace %s's (%s): a spec may name its workspace's store, never another", p, workspaceName(ws), ws.SecretStore.Provider)
	}
	return ws.SecretStore, nil
}

func workspaceName(ws *Workspace) string {
	if ws == nil || ws.Name == "" {
		return DefaultWorkspace
	}
	return ws.Name
}
