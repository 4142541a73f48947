package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

// These tests run kumo with the real terraform binary and providers served
// offline from the mirror hack/build-tools.sh builds; the environment of every
// kumo they start names them (PATH, TF_CLI_CONFIG_FILE) and a fresh directory for
// the working directories (KUMO_TERRAFORM_DIR).

// terraformEnv is newEnv with terraform set up in the environment of the
// kumo processes it starts (not this process's, so tests run in parallel); it
// returns the tools.
func terraformEnv(t *testing.T) (*env, terraformtest.Tools) {
	t.Helper()
	e, tools := terraformEnvNoProviders(t)
	e.ok("workspace", "update", "default", "--file", e.writeSpec("default.yaml", testProvidersWorkspace))
	return e, tools
}

// terraformEnvNoProviders is terraformEnv with the default workspace as it
// comes: allowing HashiCorp's providers, not the test provider.
func terraformEnvNoProviders(t *testing.T) (*env, terraformtest.Tools) {
	t.Helper()
	tools := terraformtest.Ensure(t)
	e := newEnv(t)
	e.environ = tools.Env(t.TempDir())
	return e, tools
}

// testProvidersWorkspace is a workspace file allowing the test provider
// (registry.terraform.io/kumoproj/kumotest) besides HashiCorp's.
var testProvidersWorkspace = "runtimes:\n  terraform:\n    allowedProviders: [" + strings.Join(terraformtest.AllowedProviders, ", ") + "]\n"

// kumotestObject is a kumotest_object resource: a file with a random name in dir.
func kumotestObject(name, dir, attrs, extra string) string {
	return fmt.Sprintf(`- id: kumoproj:kumotest:kumotest_object:%[1]s
  type: Terraform
  %[4]s
  attributes: {dir: %[2]q, %[3]s}
  extensions:
    provider: %[5]s
    resourceType: kumotest_object
`, name, dir, attrs, extra, terraformtest.KumotestProvider)
}

// stateResource returns a resource of a release's state, nil when absent.
func stateResource(rel map[string]any, id string) map[string]any {
	state, _ := rel["state"].(map[string]any)
	resources, _ := state["resources"].([]any)
	for _, r := range resources {
		if res := r.(map[string]any); res["id"] == id {
			return res
		}
	}
	return nil
}

// TestTerraformLocalFileLifecycle: a local_file previews as Create, is created,
// re-applies as UnChanged, previews an argument change as an Update naming the
// field, and is removed by destroy.
func TestTerraformLocalFileLifecycle(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	file := filepath.Join(t.TempDir(), "motd")
	id := "hashicorp:local:local_file:motd"
	spec := func(content string) string {
		return e.writeSpec("spec.yaml", fmt.Sprintf(`resources:
- id: %s
  type: Terraform
  attributes: {filename: %q, content: %q}
  extensions:
    provider: %s
    resourceType: local_file
`, id, file, content, terraformtest.LocalProvider))
	}

	v1 := spec("hello")
	if c := e.preview(v1)[id]; c.Action != "Create" {
		t.Fatalf("preview of a new file: %+v", c)
	}
	e.ok("apply", "--yes", "-f", v1)
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Fatalf("file after apply: %q %v", b, err)
	}
	rec := stateResource(e.release(1), id)
	attrs, _ := rec["attributes"].(map[string]any)
	ext, _ := rec["extensions"].(map[string]any)
	if sha, _ := attrs["id"].(string); len(sha) != 40 {
		t.Errorf("recorded attributes lack the computed id: %v", attrs)
	}
	if st, _ := ext[engine.ExtTerraformState].(string); !strings.Contains(st, `"local_file"`) {
		t.Errorf("the release does not record the terraform state: %v", ext)
	}

	if c := e.preview(v1)[id]; c.Action != "UnChanged" {
		t.Errorf("preview of the applied spec: %+v, want UnChanged", c)
	}
	e.ok("apply", "--yes", "-f", v1)

	v2 := spec("bye")
	c := e.preview(v2)[id]
	changed := map[string]bool{}
	for _, f := range c.Fields {
		changed[f.Path] = true
	}
	if c.Action != "Update" || !changed["content"] {
		t.Errorf("preview of a changed content: %+v, want an Update of content", c)
	}
	e.ok("apply", "--yes", "-f", v2)
	if b, err := os.ReadFile(file); err != nil || string(b) != "bye" {
		t.Errorf("file after update: %q, %v", b, err)
	}

	e.ok("destroy", "--yes")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("file still there after destroy: %v", err)
	}
	rows := e.releases()
	if last := rows[len(rows)-1]; last.Operation != "destroy" || last.Phase != "succeeded" || last.Resources != 0 {
		t.Errorf("destroy release: %+v", last)
	}
}

// TestTerraformFeedsKubernetes: a value the provider computes (the object's
// random id) flows through $kumo_path into a ConfigMap, which is applied after
// the Terraform resource; a later change of the ConfigMap alone still resolves it.
func TestTerraformFeedsKubernetes(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	ns, dir := e.ns, t.TempDir()
	tfID := "kumoproj:kumotest:kumotest_object:token"
	spec := func(label string) string {
		return e.writeSpec("spec.yaml", "resources:\n"+namespace(ns)+kumotestObject("token", dir, `content: "x"`, "")+
			fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:conn
  type: Kubernetes
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: conn, namespace: %[1]s, labels: {v: %[2]q}}
    data: {token: $kumo_path.%[3]s.id, dir: $kumo_path.%[3]s.dir}
`, ns, label, tfID))
	}
	v1 := spec("1")
	if c := e.preview(v1)["v1:ConfigMap:"+ns+":conn"]; c.Action != "Create" || len(c.Fields) != 1 || c.Fields[0].After != "(known after apply)" {
		t.Errorf("ConfigMap preview: %+v, want Create with values known after apply", c)
	}
	e.ok("apply", "--yes", "-f", v1)
	objects := terraformtest.Objects(t, dir)
	if len(objects) != 1 {
		t.Fatalf("objects %v, want one", objects)
	}
	data := func() map[string]string {
		cm, err := e.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), "conn", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}
	if d := data(); d["token"] != objects[0] || d["dir"] != dir {
		t.Errorf("ConfigMap data %v, want token %s and dir %s", d, objects[0], dir)
	}
	// The ConfigMap depends on the Terraform resource through its reference.
	deps, _ := stateResource(e.release(1), "v1:ConfigMap:"+ns+":conn")["dependsOn"].([]any)
	if !containsAny(deps, tfID) {
		t.Errorf("recorded dependsOn %v lacks %s", deps, tfID)
	}

	e.ok("apply", "--yes", "-f", spec("2"))
	if d := data(); d["token"] != objects[0] {
		t.Errorf("after a ConfigMap-only change, token = %q, want %s", d["token"], objects[0])
	}
	if o := terraformtest.Objects(t, dir); len(o) != 1 {
		t.Errorf("objects after re-apply: %v", o)
	}
}

func containsAny(list []any, want string) bool {
	for _, v := range list {
		if v == want {
			return true
		}
	}
	return false
}

// TestTerraformApplySurvivesAKilledWorker: the only worker is SIGKILLed in the
// middle of a slow terraform apply, first of a create, then of an update; each
// time a new worker, with the old working directories deleted, finishes the run
// from the state kept in the backend: exactly one object, recorded correctly.
func TestTerraformApplySurvivesAKilledWorker(t *testing.T) {
	t.Parallel()
	e, tools := terraformEnv(t)
	address := temporalServer(t)
	e.flags = address.flags()
	dir := t.TempDir()
	id := "kumoproj:kumotest:kumotest_object:slow"

	// killDuringApply applies spec with a worker whose terraform directories are
	// workDir, kills the worker while the provider works, deletes workDir and
	// lets a worker with fresh directories finish.
	killDuringApply := func(spec, workDir string) {
		t.Helper()
		e.environ = tools.Env(workDir)
		w, workerExited := e.background(nil, "worker")
		_, wait := e.background(nil, "apply", "--yes", "-f", spec)
		waitFor(t, "the slow apply to start", 2*time.Minute, func() bool {
			m, err := filepath.Glob(filepath.Join(dir, "*.pending"))
			if err != nil {
				t.Fatal(err)
			}
			return len(m) > 0
		})
		if err := w.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		workerExited()
		if err := os.RemoveAll(workDir); err != nil {
			t.Fatal(err)
		}
		e.environ = tools.Env(t.TempDir())
		next, nextExited := e.background(nil, "worker")
		if r := wait(); r.code != 0 {
			t.Fatalf("apply after the worker was replaced: %s", r)
		}
		// The next round starts with a worker of its own only.
		kill(t, next.Process)
		nextExited()
	}

	killDuringApply(e.writeSpec("v1.yaml", "resources:\n"+kumotestObject("slow", dir, `content: "v1", delay: "5s"`, "")), t.TempDir())
	objects := terraformtest.Objects(t, dir)
	if len(objects) != 1 {
		t.Fatalf("objects after the interrupted create: %v, want one", objects)
	}
	checkRecorded(t, e.release(1), id, objects[0], "v1")

	killDuringApply(e.writeSpec("v2.yaml", "resources:\n"+kumotestObject("slow", dir, `content: "v2", delay: "5s"`, "")), t.TempDir())
	if o := terraformtest.Objects(t, dir); len(o) != 1 || o[0] != objects[0] {
		t.Fatalf("objects after the interrupted update: %v, want only %s", o, objects[0])
	}
	if b, err := os.ReadFile(filepath.Join(dir, objects[0])); err != nil || string(b) != "v2" {
		t.Errorf("object holds %q after the update, %v", b, err)
	}
	checkRecorded(t, e.release(2), id, objects[0], "v2")
}

// checkRecorded: the release succeeded and records the object with its id and
// content, and a terraform state that holds it.
func checkRecorded(t *testing.T, rel map[string]any, id, objectID, content string) {
	t.Helper()
	if rel["phase"] != "succeeded" {
		t.Fatalf("release %v is %v: %v", rel["revision"], rel["phase"], rel["error"])
	}
	rec := stateResource(rel, id)
	attrs, _ := rec["attributes"].(map[string]any)
	ext, _ := rec["extensions"].(map[string]any)
	st, _ := ext[engine.ExtTerraformState].(string)
	if attrs["id"] != objectID || attrs["content"] != content || !strings.Contains(st, objectID) {
		t.Errorf("release %v records %s as %v with state %q, want id %s and content %s", rel["revision"], id, attrs, st, objectID, content)
	}
}

// TestTerraformImportAdoptsAnObject: kusionstack.io/import-id takes over an
// object made outside kumo without recreating it; from then on kumo manages it,
// and destroy removes it.
func TestTerraformImportAdoptsAnObject(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "made-by-hand")
	if err := os.WriteFile(existing, []byte("hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	id := "kumoproj:kumotest:kumotest_object:adopted"
	spec := e.writeSpec("spec.yaml", "resources:\n"+strings.Replace(kumotestObject("adopted", dir, `content: "hand"`, ""),
		"resourceType: kumotest_object", "resourceType: kumotest_object\n    kusionstack.io/import-id: "+existing, 1))

	if c := e.preview(spec)[id]; c.Action != "UnChanged" {
		t.Errorf("preview of an import matching the object: %+v, want UnChanged", c)
	}
	e.ok("apply", "--yes", "-f", spec)
	after, err := os.Stat(existing)
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the adopted object was recreated or rewritten: %v", err)
	}
	if o := terraformtest.Objects(t, dir); len(o) != 1 {
		t.Errorf("objects after import: %v", o)
	}
	checkRecorded(t, e.release(1), id, "made-by-hand", "hand")

	e.ok("destroy", "--yes")
	if _, err := os.Stat(existing); !os.IsNotExist(err) {
		t.Errorf("the adopted object survived destroy: %v", err)
	}
}

// TestTerraformProvisionerRefused: a spec whose terraform_data carries a
// local-exec provisioner (shell on the worker) is refused by preview and apply
// with the resource and key named, and the command never runs.
func TestTerraformProvisionerRefused(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	marker := filepath.Join(t.TempDir(), "ran")
	spec := e.writeSpec("provisioner.yaml", fmt.Sprintf(`resources:
- id: builtin:terraform:terraform_data:d
  type: Terraform
  attributes:
    input: x
    provisioner:
    - local-exec: {command: "touch %s"}
  extensions: {provider: %s, resourceType: terraform_data}
`, marker, terraformtest.BuiltinProvider))
	want := `builtin:terraform:terraform_data:d"): attribute "provisioner" is a Terraform meta-argument: a spec carries the resource's arguments only`
	e.fails([]string{"preview", "-f", spec}, want)
	e.fails([]string{"apply", "--yes", "-f", spec}, want)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the provisioner ran: %s: %v", marker, err)
	}
	if rows := e.releases(); len(rows) != 0 {
		t.Errorf("a refused spec made releases %+v", rows)
	}
}

// TestTerraformProviderNotAllowed: a resource whose provider source the
// workspace does not allow (the test provider is not HashiCorp's) is refused
// at preview and apply, naming the resource, the source and the setting,
// before terraform installs anything; allowed in the workspace, it applies.
func TestTerraformProviderNotAllowed(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnvNoProviders(t)
	dir := t.TempDir()
	spec := e.writeSpec("spec.yaml", "resources:\n"+kumotestObject("o", dir, `content: "x"`, ""))
	want := []string{"kumoproj:kumotest:kumotest_object:o", "provider registry.terraform.io/kumoproj/kumotest is not allowed", "runtimes.terraform.allowedProviders"}
	e.fails([]string{"preview", "-f", spec}, want...)
	e.fails([]string{"apply", "--yes", "-f", spec}, want...)
	if objs := terraformtest.Objects(t, dir); len(objs) != 0 {
		t.Errorf("a refused provider made objects %v", objs)
	}
	e.ok("workspace", "update", "default", "--file", e.writeSpec("default.yaml", testProvidersWorkspace))
	e.ok("apply", "--yes", "-f", spec)
	if objs := terraformtest.Objects(t, dir); len(objs) != 1 {
		t.Errorf("objects %v after the allowed apply, want one", objs)
	}
}

// TestTerraformErrorsNameTheResource: a provider error, a provider that cannot be
// installed and a missing binary each fail the release with terraform's reason
// and the resource's ID, on the CLI, in the release and in the run log, and the
// release keeps what was applied before.
func TestTerraformErrorsNameTheResource(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	ns, dir := e.ns, t.TempDir()
	base := "resources:\n" + namespace(ns) + configMap(ns, "first", "dependsOn: [v1:Namespace:"+ns+"]")
	e.ok("apply", "--yes", "-f", e.writeSpec("base.yaml", base))

	check := func(spec, id string, want ...string) {
		t.Helper()
		revision := len(e.releases()) + 1
		r := e.fails([]string{"apply", "--yes", "-f", e.writeSpec("bad.yaml", spec)}, append([]string{id}, want...)...)
		rel := e.release(revision)
		msg, _ := rel["error"].(string)
		if rel["phase"] != "failed" || !strings.Contains(msg, id) || !strings.Contains(msg, want[0]) {
			t.Errorf("release %d: %v, error %q; want failed naming %s and %q\n%s", revision, rel["phase"], msg, id, want[0], r)
		}
		if stateResource(rel, "v1:ConfigMap:"+ns+":first") == nil {
			t.Errorf("release %d lost the ConfigMap applied before", revision)
		}
		runID, _ := rel["runID"].(string)
		if log := e.ok("run", "logs", runID).stdout; !strings.Contains(log, id) || !strings.Contains(log, want[0]) {
			t.Errorf("run log of release %d lacks %s and %q:\n%s", revision, id, want[0], log)
		}
	}

	// The provider fails at apply time, after the ConfigMap it depends on.
	failing := "kumoproj:kumotest:kumotest_object:failing"
	check(base+configMap(ns, "second", "dependsOn: [v1:Namespace:"+ns+"]")+
		kumotestObject("failing", dir, `fail: "quota exceeded for objects"`, "dependsOn: [v1:ConfigMap:"+ns+":second]"),
		failing, "kumotest_object create failed: quota exceeded for objects")
	if stateResource(e.release(0), "v1:ConfigMap:"+ns+":second") == nil {
		t.Errorf("the failed release does not record the ConfigMap applied before the failure")
	}

	// A provider no mirror has fails the preview.
	nope := "hashicorp:nope:nope_thing:x"
	check(base+fmt.Sprintf(`- id: %s
  type: Terraform
  attributes: {a: b}
  extensions: {provider: registry.terraform.io/hashicorp/nope/1.0.0, resourceType: nope_thing}
`, nope), nope, "terraform init: Error: ", "hashicorp/nope")

	// A workspace naming a binary that is not there.
	ws := e.writeSpec("ws.yaml", testProvidersWorkspace+"    binary: /nonexistent/terraform\n")
	e.ok("workspace", "update", "-f", ws, "default")
	check(base+kumotestObject("any", dir, `content: "x"`, ""), "kumoproj:kumotest:kumotest_object:any", "terraform binary: ", "/nonexistent/terraform")
}

// TestTerraformRollbackOnFailure: when a later resource fails, an updated
// Terraform resource is put back as the prior release's spec had it (the same
// object) and one the apply created is destroyed, using the state recorded for it.
func TestTerraformRollbackOnFailure(t *testing.T) {
	t.Parallel()
	e, _ := terraformEnv(t)
	dir := t.TempDir()
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", "resources:\n"+kumotestObject("kept", dir, `content: "v1"`, "")))
	before := terraformtest.Objects(t, dir)
	if len(before) != 1 {
		t.Fatalf("objects after v1: %v", before)
	}
	deps := "dependsOn: [kumoproj:kumotest:kumotest_object:kept, kumoproj:kumotest:kumotest_object:added]"
	v2 := "resources:\n" + kumotestObject("kept", dir, `content: "v2"`, "") + kumotestObject("added", dir, `content: "new"`, "") +
		kumotestObject("failing", dir, `fail: "no more objects"`, deps)
	r := e.fails([]string{"apply", "--yes", "--rollback-on-failure", "-f", e.writeSpec("v2.yaml", v2)}, "no more objects")
	if !strings.Contains(r.stdout, "Compensation: 2 resources put back") {
		t.Errorf("apply output:\n%s", r.stdout)
	}
	if after := terraformtest.Objects(t, dir); len(after) != 1 || after[0] != before[0] {
		t.Errorf("objects after compensation: %v, want only %v", after, before)
	}
	if b, err := os.ReadFile(filepath.Join(dir, before[0])); err != nil || string(b) != "v1" {
		t.Errorf("the updated object holds %q after compensation, want v1 (%v)", b, err)
	}
	rel := e.release(2)
	if comp, _ := rel["compensation"].(map[string]any); comp["errors"] != nil {
		t.Errorf("compensation errors: %v", comp["errors"])
	}
	if stateResource(rel, "kumoproj:kumotest:kumotest_object:added") != nil {
		t.Errorf("release 2 still records the object it undid")
	}
	// The recorded state is the restored object: destroy finds and removes it.
	e.ok("destroy", "--yes")
	if o := terraformtest.Objects(t, dir); len(o) != 0 {
		t.Errorf("objects after destroy: %v", o)
	}
}
