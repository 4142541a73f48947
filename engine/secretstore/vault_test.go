package secretstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/vaulttest"
)

func refField(t testing.TB, key, text string) engine.SecretRefField {
	t.Helper()
	r, err := engine.ParseSecretRef(text)
	if err != nil {
		t.Fatal(err)
	}
	return engine.SecretRefField{Field: "stringData", Key: key, Ref: r}
}

func vaultStore(addr, path, version string, allowed ...string) *engine.WorkspaceSecretStore {
	return &engine.WorkspaceSecretStore{
		Provider:     engine.SecretProvider{Vault: &engine.VaultStore{Server: addr, Path: path, Version: version}},
		AllowedNames: allowed,
	}
}

func envOf(m map[string]string) Env { return func(k string) string { return m[k] } }

// References read a real Vault (dev server, KV v2 at secret/ and a KV v1
// mount) as Kusion reads them: with and without the mount in the name, a
// version, nested properties, the whole secret as JSON, KV v1. What cannot
// be read is a permanent error naming the secret: a missing secret,
// property or version, a token without the policy, no token at all.
func TestVault(t *testing.T) {
	v := vaulttest.Start(t)
	v1 := v.Put(t, "secret", "apps/web/db", map[string]any{"password": "first", "conn": map[string]any{"port": 5432}})
	v.Put(t, "secret", "apps/web/db", map[string]any{"password": "second", "user": "app"})
	v.MountKV1(t, "kv1")
	v.PutV1(t, "kv1", "legacy/api", map[string]any{"token": "t0k"})
	ctx := context.Background()
	store := vaultStore(v.Addr+"/", "secret", "", "secret/apps/*")
	r, err := Open(ctx, store.Provider, envOf(map[string]string{"VAULT_TOKEN": v.Token}))
	if err != nil {
		t.Fatal(err)
	}
	refs := []engine.SecretRefField{
		refField(t, "a", "ref://apps/web/db/password"),
		refField(t, "b", "ref://secret/apps/web/db/user"),
		refField(t, "c", "ref://secret/data/apps/web/db/password"),
		refField(t, "d", fmt.Sprintf("ref://apps/web/db/password?version=%d", v1)),
		refField(t, "e", fmt.Sprintf("ref://apps/web/db/conn.port?version=%d", v1)),
	}
	got, err := Resolve(ctx, "v1:Secret:demo:db", refs, store, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"second", "app", "second", "first", "5432"}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("%s = %q, want %q", refs[i].Ref, got[i], want[i])
		}
	}
	// The whole secret is its data as JSON (ref://apps/web/db is property
	// "db" of "apps/web" in Kusion's syntax: not what is meant here).
	if _, err := Resolve(ctx, "x", []engine.SecretRefField{refField(t, "f", "ref://apps/web/db")}, store, r); err == nil {
		t.Errorf("ref://apps/web/db resolved: Kusion reads it as property db of secret apps/web")
	}
	whole, err := r.Read(ctx, "apps/web/db", "")
	if err != nil || !strings.Contains(string(whole.Raw), `"password":"second"`) {
		t.Errorf("whole secret = %s, %v", whole.Raw, err)
	}

	kv1 := vaultStore(v.Addr, "kv1", "v1", "kv1/legacy/*")
	r1, err := Open(ctx, kv1.Provider, envOf(map[string]string{"VAULT_SERVER_TOKEN": v.Token, "VAULT_TOKEN": "not-this-one"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Resolve(ctx, "x", []engine.SecretRefField{refField(t, "k", "ref://legacy/api/token")}, kv1, r1); err != nil || string(got[0]) != "t0k" {
		t.Errorf("KV v1: %q, %v", got, err)
	}

	limited, err := Open(ctx, store.Provider, envOf(map[string]string{"VAULT_TOKEN": v.ReadToken(t, "secret", "apps/other/*")}))
	if err != nil {
		t.Fatal(err)
	}
	none, err := Open(ctx, store.Provider, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	const where = "v1:Secret:demo:db: stringData.k: "
	storeName := fmt.Sprintf(" (secret store vault %s (mount secret, kv v2)): ", v.Addr)
	for _, c := range []struct {
		r    Reader
		s    *engine.WorkspaceSecretStore
		ref  string
		want string
	}{
		{r, store, "ref://apps/web/db/nope", where + "ref://apps/web/db/nope" + storeName + `the secret has no property "nope"`},
		{r, store, "ref://apps/web/none/x", where + "ref://apps/web/none/x" + storeName + "secret secret/apps/web/none: not found"},
		{r, store, "ref://apps/web/db/password?version=99", where + "ref://apps/web/db/password?version=99" + storeName + "secret secret/apps/web/db version 99: not found (or deleted)"},
		{limited, store, "ref://apps/web/db/password", where + "ref://apps/web/db/password" + storeName + "secret secret/apps/web/db: permission denied"},
		{none, store, "ref://apps/web/db/password", where + "ref://apps/web/db/password" + storeName + "secret secret/apps/web/db: permission denied (the worker has no token: set VAULT_TOKEN in its environment)"},
		{r1, kv1, "ref://legacy/api/token?version=1", where + "ref://legacy/api/token?version=1 (secret store vault " + v.Addr + " (mount kv1, kv v1)): a KV v1 store keeps no versions; remove ?version="},
	} {
		_, err := Resolve(ctx, "v1:Secret:demo:db", []engine.SecretRefField{refField(t, "k", c.ref)}, c.s, c.r)
		if err == nil || err.Error() != c.want || !Permanent(err) {
			t.Errorf("%s: %v (permanent %v)\nwant %s", c.ref, err, Permanent(err), c.want)
		}
	}
	// A Vault that does not answer is not permanent: the activity retries.
	down, _ := Open(ctx, vaultStore("http://127.0.0.1:1", "secret", "v2", "*").Provider, envOf(nil))
	if _, err := down.Read(ctx, "apps/web/db", ""); err == nil || Permanent(err) {
		t.Errorf("unreachable Vault: %v (permanent %v)", err, Permanent(err))
	}
}

// BenchmarkResolve20 is what resolving a Secret of 20 references, each to
// its own Vault secret, costs one apply step (a preview reads them again).
func BenchmarkResolve20(b *testing.B) {
	v := vaulttest.Start(b)
	var refs []engine.SecretRefField
	for i := range 20 {
		v.Put(b, "secret", fmt.Sprintf("bench/s%d", i), map[string]any{"value": fmt.Sprint(i)})
		refs = append(refs, refField(b, fmt.Sprint("k", i), fmt.Sprintf("ref://bench/s%d/value", i)))
	}
	store := vaultStore(v.Addr, "secret", "v2", "secret/bench/*")
	ctx := context.Background()
	r, err := Open(ctx, store.Provider, envOf(map[string]string{"VAULT_TOKEN": v.Token}))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Resolve(ctx, "v1:Secret:bench:s", refs, store, r); err != nil {
			b.Fatal(err)
		}
	}
}
