package secretstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// maxSecretBytes bounds what one read of a store returns (AWS allows 64 KiB
// per secret; Vault's default request limit is 32 MiB, but a Secret's value
// must fit a Kubernetes object of 1 MiB).
const maxSecretBytes = 1 << 20

// vault reads KV secrets over Vault's HTTP API: GET /v1/<mount>/<path> (KV v1)
// or /v1/<mount>/data/<path>?version=N (KV v2), with the worker's token.
type vault struct {
	store  engine.VaultStore
	token  string
	ns     string
	client *http.Client
}

// newVault takes the token from VAULT_SERVER_TOKEN, else VAULT_TOKEN (as
// Kusion does), the namespace from VAULT_NAMESPACE and extra CA certificates
// from the PEM file VAULT_CACERT: the worker operator's settings, as for the
// vault CLI.
func newVault(store engine.VaultStore, env Env) (*vault, error) {
	token := env("VAULT_SERVER_TOKEN")
	if token == "" {
		token = env("VAULT_TOKEN")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if ca := env("VAULT_CACERT"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("VAULT_CACERT: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("VAULT_CACERT: %s holds no PEM certificate", ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	server, _ := url.Parse(store.Server)
	client := &http.Client{
		Transport: tr,
		Timeout:   30 * time.Second,
		// A standby node redirects to the active one; the token goes along
		// only to the same host (the operator named it), never elsewhere.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != server.Host || req.URL.Scheme != server.Scheme || len(via) > 3 {
				return fmt.Errorf("vault redirected to %s, not %s: set the store's server to the node to use", req.URL.Redacted(), server.Host)
			}
			return nil
		},
	}
	return &vault{store: store, token: token, ns: env("VAULT_NAMESPACE"), client: client}, nil
}

func (v *vault) Read(ctx context.Context, name, version string) (Secret, error) {
	mount, secret, err := v.store.SecretPath(name)
	if err != nil {
		return Secret{}, refused(err)
	}
	segs := strings.Split(mount, "/")
	if v.store.Version == "v2" {
		segs = append(segs, "data")
	} else if version != "" {
		return Secret{}, refused(errors.New("a KV v1 store keeps no versions; remove ?version="))
	}
	segs = append(segs, strings.Split(secret, "/")...)
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	u := strings.TrimRight(v.store.Server, "/") + "/v1/" + strings.Join(segs, "/")
	if version != "" {
		u += "?version=" + url.QueryEscape(version)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Secret{}, err
	}
	if v.token != "" {
		req.Header.Set("X-Vault-Token", v.token)
	}
	if v.ns != "" {
		req.Header.Set("X-Vault-Namespace", v.ns)
	}
	req.Header.Set("X-Vault-Request", "true")
	resp, err := v.client.Do(req)
	if err != nil {
		return Secret{}, fmt.Errorf("read: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSecretBytes+1))
	if err != nil {
		return Secret{}, fmt.Errorf("read: %w", err)
	}
	if len(body) > maxSecretBytes {
		return Secret{}, refused(fmt.Errorf("the secret is larger than %d bytes", maxSecretBytes))
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		if version != "" {
			return Secret{}, fmt.Errorf("secret %s/%s version %s: %w (or deleted)", mount, secret, version, ErrNotFound)
		}
		return Secret{}, fmt.Errorf("secret %s/%s: %w", mount, secret, ErrNotFound)
	case resp.StatusCode == http.StatusForbidden:
		hint := ""
		if v.token == "" {
			hint = " (the worker has no token: set VAULT_TOKEN in its environment)"
		}
		return Secret{}, refused(fmt.Errorf("secret %s/%s: permission denied%s", mount, secret, hint))
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		return Secret{}, refused(fmt.Errorf("secret %s/%s: vault answered %s%s", mount, secret, resp.Status, vaultErrors(body)))
	case resp.StatusCode != http.StatusOK:
		return Secret{}, fmt.Errorf("secret %s/%s: vault answered %s%s", mount, secret, resp.Status, vaultErrors(body))
	}
	var doc struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return Secret{}, fmt.Errorf("secret %s/%s: vault's answer is not JSON", mount, secret)
	}
	data := doc.Data
	if v.store.Version == "v2" {
		var kv2 struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(doc.Data, &kv2); err != nil {
			return Secret{}, refused(fmt.Errorf("secret %s/%s: not a KV v2 answer (is the mount KV v1? set version: v1)", mount, secret))
		}
		data = kv2.Data
	}
	fields := fieldsOf(data)
	if fields == nil {
		// KV v2 answers data: null for a deleted or destroyed version.
		return Secret{}, fmt.Errorf("secret %s/%s: %w (no data: deleted or destroyed)", mount, secret, ErrNotFound)
	}
	return Secret{Raw: data, Fields: fields}, nil
}

// vaultErrors is Vault's error list from an answer, ": a; b" (empty when none).
func vaultErrors(body []byte) string {
	var e struct {
		Errors []string `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
		return ""
	}
	s := strings.Join(e.Errors, "; ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return ": " + s
}
