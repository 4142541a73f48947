package local_test

import (
	"bytes"
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

// releaseFile returns the path of the one file under root whose name holds
// project and workspace and whose content holds a sealed value.
func releaseFile(t *testing.T, root, project, workspace string) string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.Contains(rel, project) || !strings.Contains(rel, workspace) || strings.Contains(rel, "state") {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil && sealedRE.Match(data) {
			found = append(found, path)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("release files of %s/%s holding sealed values: %v, want one", project, workspace, found)
	}
	return found[0]
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
	if err := b.CreateRelease(ctx, secretRelease("proja", "dev", "cGFzc3dvcmQtYQ==")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(releaseFile(t, root, "proja", "dev"))
	if err != nil {
		t.Fatal(err)
	}
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
			if err := b.CreateRelease(ctx, secretRelease(c.project, ws, "b3RoZXI=")); err != nil {
				t.Fatal(err)
			}
			path := releaseFile(t, root, c.project, ws)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			values := sealedRE.FindAll(data, -1)
			victim := values[0]
			if c.field == "/data/user" {
				victim = values[1]
			}
			if err := os.WriteFile(path, bytes.Replace(data, victim, []byte(stolen), 1), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = b.GetRelease(ctx, c.project, ws, 1)
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
// old constant associated data) still opens, and its next write reseals it
// bound, so the legacy value is gone from the file.
func TestLegacySealedReleaseOpensAndIsResealed(t *testing.T) {
	b, keys, root := sealedStore(t)
	if err := b.CreateRelease(ctx, secretRelease("proja", "dev", "bmV3")); err != nil {
		t.Fatal(err)
	}
	path := releaseFile(t, root, "proja", "dev")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Fixture: the password sealed as kumo sealed it before.
	legacy, err := keys.SealLegacy([]byte(`"b2xkLXBhc3N3b3Jk"`))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(data, sealedRE.Find(data), []byte(legacy), 1), 0o600); err != nil {
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
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(legacy)) {
		t.Fatal("the legacy value is still in the file after a write")
	}
	for _, v := range sealedRE.FindAll(data, -1) {
		if _, err := keys.OpenLegacy(string(v)); err == nil {
			t.Errorf("a value is still sealed the legacy way after a write")
		}
	}
	again, err := b.GetRelease(ctx, "proja", "dev", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pw := again.Spec.Resources[0].Attributes["data"].(map[string]any)["password"]; pw != "b2xkLXBhc3N3b3Jk" {
		t.Errorf("resealed value reads as %v", pw)
	}
}
