package terraform_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/terraform"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

// These tests run the real terraform binary with providers from the offline
// mirror hack/build-tools.sh builds (see internal/terraformtest).

func newRuntime(t *testing.T) (*terraform.Runtime, terraformtest.Tools) {
	t.Helper()
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return rt, tools
}

func localFile(name, filename, content string) *engine.Resource {
	return &engine.Resource{
		ID: engine.TerraformID("hashicorp", "local", "local_file", name), Type: engine.Terraform,
		Attributes: map[string]any{"filename": filename, "content": content},
		Extensions: map[string]any{engine.ExtProvider: terraformtest.LocalProvider, engine.ExtResourceType: "local_file"},
	}
}

func object(name, dir string, attrs map[string]any) *engine.Resource {
	a := map[string]any{"dir": dir}
	for k, v := range attrs {
		a[k] = v
	}
	return &engine.Resource{
		ID: engine.TerraformID("kumoproj", "kumotest", "kumotest_object", name), Type: engine.Terraform, Attributes: a,
		Extensions: map[string]any{engine.ExtProvider: terraformtest.KumotestProvider, engine.ExtResourceType: "kumotest_object"},
	}
}

// recorded is desired carrying the terraform state of an earlier result, as kumo
// hands a resource to the runtime.
func recorded(desired, result *engine.Resource) *engine.Resource {
	out := *desired
	out.Extensions = map[string]any{}
	for k, v := range desired.Extensions {
		out.Extensions[k] = v
	}
	if result != nil {
		out.Extensions[engine.ExtTerraformState] = result.Extensions[engine.ExtTerraformState]
	}
	return &out
}

func preview(t *testing.T, rt *terraform.Runtime, res *engine.Resource) engine.Change {
	t.Helper()
	live, planned, err := rt.Preview(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Diff(res.ID, res.Type, planned, live, nil)
}

func apply(t *testing.T, rt *terraform.Runtime, res *engine.Resource) *engine.Resource {
	t.Helper()
	out, err := rt.Apply(context.Background(), res, runtime.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLocalFileLifecycle: preview Create, apply, re-apply UnChanged, an argument
// change previews as an Update naming the field, destroy removes the file.
func TestLocalFileLifecycle(t *testing.T) {
	rt, _ := newRuntime(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "hello.txt")
	res := localFile("hello", file, "hello ${not_a_template}")

	if c := preview(t, rt, res); c.Action != engine.Create {
		t.Fatalf("preview of a new file: %+v", c)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("preview created the file: %v", err)
	}
	got := apply(t, rt, res)
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello ${not_a_template}" {
		t.Fatalf("file after apply: %q %v", b, err)
	}
	id, _ := got.Attributes["id"].(string)
	if len(id) != 40 || got.Attributes["filename"] != file {
		t.Errorf("applied attributes lack the computed id: %v", got.Attributes)
	}
	if s, _ := got.Extensions[engine.ExtTerraformState].(string); !strings.Contains(s, id) {
		t.Errorf("result carries no terraform state with the object: %q", s)
	}

	if c := preview(t, rt, recorded(res, got)); c.Action != engine.UnChanged {
		t.Errorf("re-apply previews as %+v, want UnChanged", c)
	}
	again := apply(t, rt, recorded(res, got))
	if again.Attributes["id"] != id {
		t.Errorf("re-apply changed the id: %v -> %v", id, again.Attributes["id"])
	}

	changed := localFile("hello", file, "bye")
	c := preview(t, rt, recorded(changed, again))
	fields := map[string]engine.FieldChange{}
	for _, f := range c.Fields {
		fields[f.Path] = f
	}
	if c.Action != engine.Update || fields["content"].After != "bye" || fields["content"].Before != "hello ${not_a_template}" || fields["id"].After != engine.KnownAfterApply {
		t.Errorf("changed content previews as %+v, want an Update of content (and id known after apply)", c)
	}
	updated := apply(t, rt, recorded(changed, again))
	if b, err := os.ReadFile(file); err != nil || string(b) != "bye" {
		t.Errorf("file after update: %q, %v", b, err)
	}
	live, err := rt.Read(ctx, updated)
	if err != nil || live == nil || live.Attributes["content"] != "bye" {
		t.Fatalf("read after update: %+v %v", live, err)
	}

	if err := rt.Delete(ctx, live); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("file still there after delete: %v", err)
	}
	if gone, err := rt.Read(ctx, live); !errors.Is(err, runtime.ErrNotFound) || gone != nil {
		t.Errorf("read after delete: %+v %v, want not found", gone, err)
	}
}

// TestStateComesFromTheRecordNotTheDisk: with its working directories deleted (or
// on another worker), the runtime continues from the recorded state: a re-apply
// finds the object instead of creating another, a delete removes it.
func TestStateComesFromTheRecordNotTheDisk(t *testing.T) {
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	dir := t.TempDir()
	workerA, workerB := t.TempDir(), t.TempDir()
	first, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: workerA})
	if err != nil {
		t.Fatal(err)
	}
	res := object("o", dir, map[string]any{"content": "v1"})
	got := apply(t, first, res)
	if err := os.RemoveAll(workerA); err != nil {
		t.Fatal(err)
	}

	second, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: workerB})
	if err != nil {
		t.Fatal(err)
	}
	next := object("o", dir, map[string]any{"content": "v2"})
	if c := preview(t, second, recorded(next, got)); c.Action != engine.Update {
		t.Errorf("preview on another worker: %+v, want Update", c)
	}
	updated := apply(t, second, recorded(next, got))
	if updated.Attributes["id"] != got.Attributes["id"] || len(terraformtest.Objects(t, dir)) != 1 {
		t.Errorf("update on another worker made %v (id %v, was %v)", terraformtest.Objects(t, dir), updated.Attributes["id"], got.Attributes["id"])
	}
	// A stale state on disk is replaced by the record: without the record, the
	// resource does not exist, whatever the working directory says.
	if live, err := second.Read(context.Background(), next); !errors.Is(err, runtime.ErrNotFound) || live != nil {
		t.Errorf("read without a recorded state: %+v %v, want not found", live, err)
	}
	if err := second.Delete(context.Background(), updated); err != nil {
		t.Fatal(err)
	}
	if o := terraformtest.Objects(t, dir); len(o) != 0 {
		t.Errorf("objects after delete: %v", o)
	}
}

// TestImportAdoptsTheObject: kusionstack.io/import-id takes an existing object
// over: the preview sees it, the apply updates it in place, no second one appears.
func TestImportAdoptsTheObject(t *testing.T) {
	rt, _ := newRuntime(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "existing"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := object("adopted", dir, map[string]any{"content": "new"})
	res.Extensions[engine.ExtImportID] = filepath.Join(dir, "existing")

	c := preview(t, rt, res)
	if c.Action != engine.Update || len(c.Fields) != 1 || c.Fields[0].Path != "content" || c.Fields[0].Before != "old" {
		t.Errorf("preview of an import: %+v, want an Update of content", c)
	}
	got := apply(t, rt, res)
	if got.Attributes["id"] != "existing" {
		t.Errorf("adopted object has id %v", got.Attributes["id"])
	}
	if o := terraformtest.Objects(t, dir); len(o) != 1 || o[0] != "existing" {
		t.Errorf("objects after import: %v", o)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "existing")); err != nil || string(b) != "new" {
		t.Errorf("adopted object holds %q, %v", b, err)
	}
	// From now on the recorded state holds it: a re-apply is no change.
	if c := preview(t, rt, recorded(res, got)); c.Action != engine.UnChanged {
		t.Errorf("re-apply of the adopted object: %+v", c)
	}
}

// TestErrorsNameTheResource: a provider error, a provider that cannot be
// installed and a missing binary each fail with terraform's reason and the
// resource's ID, marked permanent.
func TestErrorsNameTheResource(t *testing.T) {
	rt, tools := newRuntime(t)
	ctx := context.Background()

	failing := object("failing", t.TempDir(), map[string]any{"fail": "the disk is on fire"})
	_, err := rt.Apply(ctx, failing, runtime.ApplyOptions{})
	checkErr(t, err, "apply "+failing.ID+": terraform apply: Error: kumotest_object create failed: the disk is on fire")

	missing := localFile("missing", filepath.Join(t.TempDir(), "x"), "x")
	missing.Extensions[engine.ExtProvider] = "registry.terraform.io/hashicorp/nope/1.0.0"
	missing.ID = engine.TerraformID("hashicorp", "nope", "local_file", "missing")
	_, err = rt.Apply(ctx, missing, runtime.ApplyOptions{})
	checkErr(t, err, "apply "+missing.ID+": terraform init: Error: ", "hashicorp/nope")

	noBinary, err := terraform.New(terraform.Config{Binary: filepath.Join(t.TempDir(), "terraform"), AllowedProviders: terraformtest.AllowedProviders, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res := localFile("x", filepath.Join(t.TempDir(), "x"), "x")
	_, err = noBinary.Apply(ctx, res, runtime.ApplyOptions{})
	checkErr(t, err, "apply "+res.ID+": terraform binary: ", "no such file")

	t.Setenv("PATH", tools.PathDir+"-nothing-here")
	onPath, err := terraform.New(terraform.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = onPath.Preview(ctx, res)
	checkErr(t, err, "preview "+res.ID+`: terraform binary "terraform" not found on PATH`)
}

func checkErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if !runtime.IsPermanent(err) {
		t.Errorf("error %q is not permanent", err)
	}
	if strings.ContainsAny(err.Error(), "╷│╵") {
		t.Errorf("error keeps terraform's box drawing: %q", err)
	}
}

// TestCancelInterruptsTerraform: cancelling a slow apply interrupts terraform,
// which stops the provider's create; nothing is created and the error says so.
func TestCancelInterruptsTerraform(t *testing.T) {
	rt, _ := newRuntime(t)
	dir := t.TempDir()
	res := object("slow", dir, map[string]any{"delay": "10m"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := rt.Apply(ctx, res, runtime.ApplyOptions{})
		done <- err
	}()
	waitPending(t, dir)
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "apply "+res.ID+": terraform apply interrupted") || runtime.IsPermanent(err) {
		t.Fatalf("cancelled apply: %v", err)
	}
	if o := terraformtest.Objects(t, dir); len(o) != 0 {
		t.Errorf("objects after a cancelled create: %v", o)
	}
}

// waitPending waits until a kumotest create is in flight in dir.
func waitPending(t *testing.T, dir string) {
	t.Helper()
	for {
		matches, err := filepath.Glob(filepath.Join(dir, "*.pending"))
		if err != nil {
			t.Error(err)
			return
		}
		if len(matches) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProvidersAreSharedNotCopied: resources of one provider link it from the
// shared plugin cache; no working directory holds a copy.
func TestProvidersAreSharedNotCopied(t *testing.T) {
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	dir := t.TempDir()
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		apply(t, rt, localFile(name, filepath.Join(files, name), name))
	}
	installed, err := filepath.Glob(filepath.Join(dir, "work", "*", ".terraform", "providers", "registry.terraform.io", "hashicorp", "local", "1.4.0", "*"))
	if err != nil || len(installed) != 3 {
		t.Fatalf("installed providers %v %v, want 3", installed, err)
	}
	for _, p := range installed {
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is not a link into the plugin cache: %v %v", p, st.Mode(), err)
		}
	}
}

// TestPluginDirInstallsOffline: with a plugin directory, providers come from it
// even when the CLI configuration has no mirror.
func TestPluginDirInstallsOffline(t *testing.T) {
	tools := terraformtest.Ensure(t)
	empty := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", empty)
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, PluginDir: tools.Mirror, AllowedProviders: terraformtest.AllowedProviders, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	apply(t, rt, localFile("f", file, "offline"))
	if b, err := os.ReadFile(file); err != nil || string(b) != "offline" {
		t.Errorf("file holds %q, %v", b, err)
	}
}

// TestBuiltinTerraformData: terraform_data needs no provider; its computed id
// and output are recorded.
func TestBuiltinTerraformData(t *testing.T) {
	rt, _ := newRuntime(t)
	res := &engine.Resource{
		ID: engine.TerraformID("builtin", "terraform", "terraform_data", "d"), Type: engine.Terraform,
		Attributes: map[string]any{"input": "hello"},
		Extensions: map[string]any{engine.ExtProvider: terraformtest.BuiltinProvider, engine.ExtResourceType: "terraform_data"},
	}
	c := preview(t, rt, res)
	if c.Action != engine.Create {
		t.Errorf("preview: %+v", c)
	}
	got := apply(t, rt, res)
	if id, _ := got.Attributes["id"].(string); id == "" || id == engine.KnownAfterApply || got.Attributes["output"] != "hello" {
		t.Errorf("terraform_data attributes %v", got.Attributes)
	}
}

// TestMetaArgumentsRefused: a resource whose attributes carry a provisioner,
// handed to the runtime directly (as a workflow started without validation
// would), is refused before anything is written or terraform runs: the
// local-exec command that would create a marker file never runs.
func TestMetaArgumentsRefused(t *testing.T) {
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	work := t.TempDir()
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: work})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	res := &engine.Resource{
		ID: engine.TerraformID("builtin", "terraform", "terraform_data", "d"), Type: engine.Terraform,
		Attributes: map[string]any{
			"input":       "x",
			"provisioner": []any{map[string]any{"local-exec": map[string]any{"command": "touch " + marker}}},
		},
		Extensions: map[string]any{engine.ExtProvider: terraformtest.BuiltinProvider, engine.ExtResourceType: "terraform_data"},
	}
	want := `builtin:terraform:terraform_data:d: attribute "provisioner" is a Terraform meta-argument: a spec carries the resource's arguments only`
	check := func(op string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || !runtime.IsPermanent(err) {
			t.Errorf("%s: error = %v, want a permanent one containing %q", op, err, want)
		}
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the provisioner ran (marker %s: %v)", op, marker, err)
		}
	}
	_, _, err = rt.Preview(context.Background(), res)
	check("preview", err)
	_, err = rt.Apply(context.Background(), res, runtime.ApplyOptions{})
	check("apply", err)
	_, err = rt.Apply(context.Background(), res, runtime.ApplyOptions{DryRun: true})
	check("dry-run apply", err)
	// New makes the plugin cache and the directory of working directories.
	if entries, err := os.ReadDir(filepath.Join(work, "work")); err != nil || len(entries) != 0 {
		t.Errorf("the runtime wrote %v (%v) for a refused resource", entries, err)
	}
	// Adopting by import writes the resource block too: refused there as well.
	imp := *res
	imp.Extensions = map[string]any{engine.ExtImportID: "x"}
	for k, v := range res.Extensions {
		imp.Extensions[k] = v
	}
	_, err = rt.Read(context.Background(), &imp)
	check("read by import", err)
}

// TestPreviewSeesDrift: an object changed outside kumo previews with its live
// value, and the apply puts it back; Read sees the change too.
func TestPreviewSeesDrift(t *testing.T) {
	rt, _ := newRuntime(t)
	dir := t.TempDir()
	res := object("drifting", dir, map[string]any{"content": "mine"})
	got := apply(t, rt, res)
	file := filepath.Join(dir, got.Attributes["id"].(string))
	if err := os.WriteFile(file, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := rt.Read(context.Background(), recorded(res, got))
	if err != nil || live == nil || live.Attributes["content"] != "theirs" {
		t.Fatalf("read of a drifted object: %+v %v", live, err)
	}
	c := preview(t, rt, recorded(res, got))
	if c.Action != engine.Update || len(c.Fields) != 1 || c.Fields[0].Before != "theirs" || c.Fields[0].After != "mine" {
		t.Errorf("preview of a drifted object: %+v, want an Update of content from theirs to mine", c)
	}
	apply(t, rt, recorded(res, got))
	if b, err := os.ReadFile(file); err != nil || string(b) != "mine" {
		t.Errorf("object holds %q after the apply, %v", b, err)
	}
}

// TestProviderNotAllowedRefusedBeforeInit: a provider the workspace does not
// allow is refused, naming the resource and the source, before terraform runs:
// no working directory is written and no provider lands in the plugin cache.
func TestProviderNotAllowedRefusedBeforeInit(t *testing.T) {
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	dir := t.TempDir()
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, Dir: dir}) // the default: HashiCorp's providers
	if err != nil {
		t.Fatal(err)
	}
	res := object("o", t.TempDir(), map[string]any{"content": "x"})
	want := []string{res.ID, "provider registry.terraform.io/kumoproj/kumotest is not allowed", "runtimes.terraform.allowedProviders"}
	_, _, err = rt.Preview(context.Background(), res)
	checkErr(t, err, want...)
	_, err = rt.Apply(context.Background(), res, runtime.ApplyOptions{})
	checkErr(t, err, want...)
	for _, sub := range []string{"work", "plugins"} {
		if entries, err := os.ReadDir(filepath.Join(dir, sub)); err != nil || len(entries) != 0 {
			t.Errorf("%s holds %v (%v) after a refused provider", sub, entries, err)
		}
	}
	// HashiCorp's providers are allowed by default.
	apply(t, rt, localFile("f", filepath.Join(t.TempDir(), "f"), "x"))
}
