package local_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
)

const sealedMarker = "marker-0b5e7c41"

func secretResource(value any) engine.Resource {
	return engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "db", "namespace": "demo"},
		"data":       map[string]any{"password": value},
		"stringData": map[string]any{"nested": map[string]any{"n": int64(3), "s": sealedMarker}},
	}}
}

// grepTree fails if any file under root holds marker.
func grepTree(t *testing.T, root, marker string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data := readRecord(t, path) // compressed files decompressed
		if bytes.Contains(data, []byte(marker)) {
			t.Errorf("%s holds the secret in clear", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSealedStoreKeepsSecretsEncrypted(t *testing.T) {
	b, keys, root := sealedStore(t)

	res := secretResource(sealedMarker)
	// A Terraform resource in a spec does not say which attributes its
	// provider marks sensitive: all of them are sealed.
	tf := engine.Resource{ID: "hashicorp:local:local_file:key", Type: engine.Terraform,
		Attributes: map[string]any{"filename": "/tmp/key", "sensitive_content": sealedMarker, "n": int64(7), "f": 1.5, "list": []any{"a", int64(1)}},
		Extensions: map[string]any{engine.ExtProvider: "registry.terraform.io/hashicorp/local/1.4.0", engine.ExtResourceType: "local_file"}}
	spec := &engine.Spec{Resources: []engine.Resource{res, tf}}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if hash != engine.HashSpec(spec) {
		t.Errorf("spec stored under %s, want its content hash %s", hash, engine.HashSpec(spec))
	}
	r := backendtest.Release("p", "w", 1)
	r.Spec = spec
	r.State = &engine.State{Resources: []engine.Resource{res}}
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := b.PutStateEntry(ctx, backend.KeyOf(r), backend.StateEntry{ID: res.ID, Resource: &res}); err != nil {
		t.Fatal(err)
	}
	// A batch step records many resources in one object: sealed the same way.
	batched := secretResource(sealedMarker)
	batched.ID = "v1:Secret:demo:batched"
	if err := b.PutStateEntries(ctx, backend.KeyOf(r), []backend.StateEntry{{ID: batched.ID, Resource: &batched}}); err != nil {
		t.Fatal(err)
	}
	if res.Attributes["data"].(map[string]any)["password"] != sealedMarker || batched.Attributes["data"].(map[string]any)["password"] != sealedMarker {
		t.Fatal("storing changed the caller's resource")
	}
	grepTree(t, root, sealedMarker)
	if e, ok, err := b.GetStateEntry(ctx, backend.KeyOf(r), batched.ID); err != nil || !ok || !reflect.DeepEqual(*e.Resource, batched) {
		t.Errorf("batched entry read back as %v (found %v, %v), want %v", e.Resource, ok, err, batched.Attributes)
	}

	gotSpec, err := b.GetSpec(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	gotRel, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	entry, ok, err := b.GetStateEntry(ctx, backend.KeyOf(r), res.ID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if !reflect.DeepEqual(gotSpec.Resources[1], tf) {
		t.Errorf("Terraform resource read back as %v, want %v", gotSpec.Resources[1].Attributes, tf.Attributes)
	}
	for what, got := range map[string]engine.Resource{"spec": gotSpec.Resources[0], "release spec": gotRel.Spec.Resources[0], "release state": gotRel.State.Resources[0], "state entry": *entry.Resource} {
		if !reflect.DeepEqual(got, res) {
			t.Errorf("%s read back as %v, want %v", what, got.Attributes, res.Attributes)
		}
	}

	// Without the key the records do not read, and say which key they need.
	plain, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.GetRelease(ctx, "p", "w", 1); err == nil || !strings.Contains(err.Error(), keys.CurrentID()) {
		t.Errorf("reading without the key: %v, want an error naming key %s", err, keys.CurrentID())
	}
	// Records written before the codec was on read as they are.
	if err := plain.CreateRelease(ctx, backendtest.Release("p", "old", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetRelease(ctx, "p", "old", 1); err != nil {
		t.Errorf("a record written in clear: %v", err)
	}
}

// The whole conformance suite holds with sealing on.
func TestConformanceSealed(t *testing.T) {
	keys, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), keyring.FileName))
	if err != nil {
		t.Fatal(err)
	}
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		b, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b.SetSealer(keys)
		return b
	})
}

// A hook Secret's data is sealed at rest like a resource's, bound to its
// place as a hook (the AAD names it a hook), and opened when the spec and a
// release holding it are read.
func TestSealedStoreKeepsHookSecretsEncrypted(t *testing.T) {
	b, _, root := sealedStore(t)
	res := secretResource(sealedMarker)
	hook := engine.Hook{ID: res.ID, Events: []engine.HookEvent{engine.HookPreSync}, Attributes: res.Attributes}
	spec := &engine.Spec{Resources: []engine.Resource{}, Hooks: []engine.Hook{hook}}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	r := backendtest.Release("p", "w", 1)
	r.Spec = spec
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	grepTree(t, root, sealedMarker)
	got, err := b.GetSpec(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(engine.Normalize(got.Hooks[0].Attributes), engine.Normalize(hook.Attributes)) {
		t.Errorf("hook read back %v, want %v", got.Hooks[0].Attributes, hook.Attributes)
	}
	rel, err := b.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Spec == nil || len(rel.Spec.Hooks) != 1 || rel.Spec.Hooks[0].Attributes["stringData"].(map[string]any)["nested"].(map[string]any)["s"] != sealedMarker {
		t.Errorf("release spec hooks %+v", rel.Spec)
	}
}

// A state without secrets, written with a codec key, reads without it (as
// another machine with its own key reads a shared bucket): only sealed
// values need the key, not the record's own bookkeeping.
func TestStateWithoutSecretsReadsWithoutTheKey(t *testing.T) {
	b, _, root := sealedStore(t)
	r := backendtest.Release("p", "w", 1)
	cm := engine.Resource{ID: "v1:ConfigMap:demo:web", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web", "namespace": "demo"},
		"data": map[string]any{"k": "v"}}}
	r.Spec = &engine.Spec{Resources: []engine.Resource{cm}}
	live := cm
	live.Attributes = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "demo", "uid": "6f1c", "resourceVersion": "12"},
		"data":     map[string]any{"k": "v"}}
	r.State = &engine.State{Resources: []engine.Resource{live}}
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	plain, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plain.GetRelease(ctx, "p", "w", 1)
	if err != nil {
		t.Fatalf("reading a state without secrets without the key: %v", err)
	}
	if !reflect.DeepEqual(got.State.Resources, r.State.Resources) {
		t.Errorf("state read back as %v, want %v", got.State.Resources, r.State.Resources)
	}
}

// A kept preview (a run's changes, which may show a Terraform attribute its
// provider marks sensitive) is sealed whole, and opens only as that
// release's.
func TestSealedStoreKeepsPreviewsEncrypted(t *testing.T) {
	b, _, root := sealedStore(t)
	for _, rev := range []int{1, 2} {
		if err := b.CreateRelease(ctx, backendtest.Release("p", "w", rev)); err != nil {
			t.Fatal(err)
		}
	}
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	p := backend.RecordedPreview{Changes: []engine.Change{{ID: "hashicorp:local:local_file:key", Type: engine.Terraform, Action: engine.Create,
		Fields: []engine.FieldChange{{Path: "sensitive_content", After: sealedMarker}}}}}
	if err := b.PutPreview(ctx, key, p); err != nil {
		t.Fatal(err)
	}
	grepTree(t, root, sealedMarker)
	got, ok, err := b.GetPreview(ctx, key)
	if err != nil || !ok || !reflect.DeepEqual(got, p) {
		t.Fatalf("GetPreview = %+v, %v, %v; want %+v", got, ok, err, p)
	}
	// Moved under another revision, it does not open.
	src := filepath.Join(root, "releases", "p", "w")
	moved := false
	_ = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(path) == "preview.json" && !moved {
			data, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			dst := strings.Replace(path, string(filepath.Separator)+"1.", string(filepath.Separator)+"2.", 1)
			if dst == path {
				t.Fatalf("no revision 1 in %s", path)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o600); err != nil {
				t.Fatal(err)
			}
			moved = true
		}
		return nil
	})
	if !moved {
		t.Fatalf("no preview.json under %s", src)
	}
	if _, _, err := b.GetPreview(ctx, backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2}); err == nil {
		t.Fatal("a preview sealed for revision 1 opened as revision 2's")
	}
	// Without the key it does not read.
	plain, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.GetPreview(ctx, key); err == nil || !strings.Contains(err.Error(), "no codec key") {
		t.Fatalf("GetPreview without the key: %v, want an error saying there is no codec key", err)
	}
}
