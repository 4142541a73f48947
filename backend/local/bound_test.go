package local_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
)

var sealedRE = regexp.MustCompile(`kumo:sealed:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+`)

// specFile returns the path of the file r's spec is stored in (under its
// content hash, compressed: see readRecord), which holds its sealed values.
func specFile(t *testing.T, root string, r *engine.Release) string {
	t.Helper()
	path := filepath.Join(root, "specs", engine.HashSpec(r.Spec)+".yaml")
	if !sealedRE.Match(readRecord(t, path)) {
		t.Fatalf("%s holds no sealed value", path)
	}
	return path
}

func sealedStore(t *testing.T) (*local.Backend, *keyring.Ring, string) {
	t.Helper()
	root := t.TempDir()
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	b, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	b.SetSealer(keys)
	return b, keys, root
}

func secretRelease(project, workspace, value string) *engine.Release {
	r := backendtest.Release(project, workspace, 1)
	res := engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "demo"},
		"data":     map[string]any{"password": value, "user": "dXNlcg=="},
	}}
	r.Spec = &engine.Spec{Resources: []engine.Resource{res}}
	return r
}

// A sealed value copied from one release file into another project's, or into
// another resource or field of the same project, does not open there: the
// error names the resource and field, not the value.
func TestSealedValueDoesNotOpenElsewhere(t *testing.T) {
	b, _, root := sealedStore(t)
	src := secretRelease("proja", "dev", "cGFzc3dvcmQtYQ==")
	if err := b.CreateRelease(ctx, src); err != nil {
		t.Fatal(err)
	}
	data := readRecord(t, specFile(t, root, src))
	// The first sealed value in the file is data.password (keys are sorted).
	stolen := string(sealedRE.Find(data))

	for name, c := range map[string]struct {
		project, field string
	}{
		"another project":           {"projb", "/data/password"},
		"another field, same place": {"proja", "/data/user"},
	} {
		t.Run(name, func(t *testing.T) {
			// Write the target release normally, then put the stolen value in
			// its file, as someone with write access to the backend could.
			ws := "ws" + strings.ReplaceAll(c.field, "/", "")
			target := secretRelease(c.project, ws, "b3RoZXI="+ws)
			if err := b.CreateRelease(ctx, target); err != nil {
				t.Fatal(err)
			}
			path := specFile(t, root, target)
			data := readRecord(t, path)
			values := sealedRE.FindAll(data, -1)
			victim := values[0]
			if c.field == "/data/user" {
				victim = values[1]
			}
			writeRecord(t, path, bytes.Replace(data, victim, []byte(stolen), 1))
			_, err := b.GetRelease(ctx, c.project, ws, 1)
			if err == nil {
				t.Fatal("the copied value opened")
			}
			for _, want := range []string{"v1:Secret:demo:db", c.field, "does not open here"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if strings.Contains(err.Error(), stolen) {
				t.Errorf("error %q shows the value", err)
			}
		})
	}
}

// A sealed value arriving as input (in a spec or a release to store) is
// refused, never kept as it is and opened later.
func TestStoreRefusesSealedInput(t *testing.T) {
	b, keys, _ := sealedStore(t)
	sealed, err := keys.Seal([]byte(`"cGFzcw=="`), keyring.AAD("release", "proja", "dev", "v1:Secret:demo:db", "/data/password"))
	if err != nil {
		t.Fatal(err)
	}
	r := secretRelease("projb", "dev", sealed)
	if err := b.CreateRelease(ctx, r); !errors.Is(err, engine.ErrSealedCopied) || !strings.Contains(err.Error(), "/data/password") {
		t.Errorf("CreateRelease with a sealed value: %v, want ErrSealedCopied naming the field", err)
	}
	if _, err := b.PutSpec(ctx, r.Spec); !errors.Is(err, engine.ErrSealedCopied) {
		t.Errorf("PutSpec with a sealed value: %v, want ErrSealedCopied", err)
	}
	if err := b.CreateRelease(ctx, backendtest.Release("projb", "dev", 1)); err != nil {
		t.Fatal(err)
	}
	res := r.Spec.Resources[0]
	if err := b.PutStateEntry(ctx, backend.ReleaseKey{Project: "projb", Workspace: "dev", Revision: 1}, backend.StateEntry{ID: res.ID, Resource: &res}); !errors.Is(err, engine.ErrSealedCopied) {
		t.Errorf("PutStateEntry with a sealed value: %v, want ErrSealedCopied", err)
	}
}

// A release file sealed before values were bound to their place (with the
// old constant associated data, in record format 1: plain text, the spec
// inline) still opens, and its next write reseals it bound, so the legacy
// value is gone from the backend.
func TestLegacySealedReleaseOpensAndIsResealed(t *testing.T) {
	b, keys, root := sealedStore(t)
	// Fixture: the release as kumo wrote it before, the password sealed the
	// old way.
	legacy, err := keys.SealLegacy([]byte(`"b2xkLXBhc3N3b3Jk"`))
	if err != nil {
		t.Fatal(err)
	}
	old := secretRelease("proja", "dev", legacy)
	text, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "releases", "proja", "dev", "1.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetRelease(ctx, "proja", "dev", 1)
	if err != nil {
		t.Fatalf("a legacy sealed release: %v", err)
	}
	if pw := got.Spec.Resources[0].Attributes["data"].(map[string]any)["password"]; pw != "b2xkLXBhc3N3b3Jk" {
		t.Fatalf("legacy value opened as %v", pw)
	}
	if err := b.UpdateRelease(ctx, got); err != nil {
		t.Fatal(err)
	}
	b.Wait() // the copy the write replaced, unlinked
	sealed := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data := readRecord(t, p)
		if bytes.Contains(data, []byte(legacy)) {
			t.Errorf("%s still holds the legacy value after a write", p)
		}
		for _, v := range sealedRE.FindAll(data, -1) {
			sealed++
			if _, err := keys.OpenLegacy(string(v)); err == nil {
				t.Errorf("%s: a value is still sealed the legacy way after a write", p)
			}
		}
		return nil
	})
	if sealed == 0 {
		t.Fatal("no sealed value in the backend after the write")
	}
	again, err := b.GetRelease(ctx, "proja", "dev", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pw := again.Spec.Resources[0].Attributes["data"].(map[string]any)["password"]; pw != "b2xkLXBhc3N3b3Jk" {
		t.Errorf("resealed value reads as %v", pw)
	}
}
