package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var update = flag.Bool("update", false, "rewrite golden files")

// shopProject copies examples/shop into a temporary directory under the project
// name project, with the example redis generator built into generators/redis,
// and returns the dev stack's directory.
func shopProject(t *testing.T, project string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	src := filepath.Join("..", "..", "examples", "shop")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "generators" {
				return filepath.SkipDir // a locally built generator, if any
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "project.yaml" {
			data = regexp.MustCompile(`(?m)^name: shop$`).ReplaceAll(data, []byte("name: "+project))
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	gen := buildGo(t, "../../examples/generators/redis")
	if err := os.MkdirAll(filepath.Join(dir, "generators"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gen, filepath.Join(dir, "generators", "redis")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "dev")
}

// writeStack writes a project named project with a stack "dev" holding app.yaml,
// and extra files (path relative to the project -> content).
func writeStack(t *testing.T, project, projectExtra, app string) string {
	t.Helper()
	dir := t.TempDir()
	stack := filepath.Join(dir, "dev")
	for path, content := range map[string]string{
		"project.yaml":   "name: " + project + "\n" + projectExtra,
		"dev/stack.yaml": "name: dev\n",
		"dev/app.yaml":   app,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return stack
}

// Test 1: the example stack generates the golden Spec, the same bytes every time.
func TestGenerateExampleGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.project = "shop"
	stack := shopProject(t, "shop")
	first := e.ok("generate", "--stack", stack).stdout
	second := e.ok("generate", "--stack", stack).stdout
	if first != second {
		t.Fatalf("two generates differ:\n%s\n---\n%s", first, second)
	}
	golden := filepath.Join("testdata", "shop-dev.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, []byte(first), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if first != string(want) {
		t.Fatalf("generate differs from %s (rerun with -update if the change is intended):\n%s", golden, first)
	}
	var spec struct {
		Resources []struct {
			ID string `json:"id"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(e.ok("generate", "--stack", stack, "-o", "json").stdout), &spec); err != nil || len(spec.Resources) != 7 {
		t.Fatalf("generate -o json: %v, %d resources", err, len(spec.Resources))
	}
}

// Tests 1 and 3: apply the example stack; the external generator's resources
// exist, and its $kumo_path env patch is resolved to the Redis Service's IP.
func TestApplyExampleStack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stack := shopProject(t, e.project)
	applied := e.ok("apply", "--yes", "--stack", stack).stdout
	ctx := context.Background()
	// Its Deployments (web, and the generator's Redis) were waited for until
	// available.
	waited := regexp.MustCompile(`(?m)^  done +create apps/v1:Deployment:\S+: Progressing.* → Healthy: (\d+)/\d+ replicas available$`).FindAllString(applied, -1)
	if len(waited) != 2 {
		t.Errorf("apply waited for %d Deployments, want 2:\n%s", len(waited), applied)
	}
	ns, err := e.kube.CoreV1().Namespaces().Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["app.kubernetes.io/part-of"] != e.project {
		t.Errorf("namespace labels %v", ns.Labels)
	}
	name := e.project + "-dev-web"
	dep, err := e.kube.AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": e.project, "kumo.io/stack": "dev", "kumo.io/workspace": "default"} {
		if dep.Labels[k] != v || dep.Spec.Template.Labels[k] != v {
			t.Errorf("deployment label %s: %q / pod %q, want %q", k, dep.Labels[k], dep.Spec.Template.Labels[k], v)
		}
	}
	if *dep.Spec.Replicas != 2 {
		t.Errorf("replicas %d", *dep.Spec.Replicas)
	}
	svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 80 || svc.Spec.Selector["app.kubernetes.io/name"] != "web" {
		t.Errorf("service %+v", svc.Spec)
	}
	redis, err := e.kube.CoreV1().Services(e.ns).Get(ctx, name+"-cache", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, v := range dep.Spec.Template.Spec.Containers[0].Env {
		env[v.Name] = v.Value
	}
	if env["REDIS_HOST"] == "" || env["REDIS_HOST"] != redis.Spec.ClusterIP || env["REDIS_PORT"] != "6379" || env["LOG_LEVEL"] != "info" {
		t.Errorf("web env %v, want REDIS_HOST = the redis Service's cluster IP %s", env, redis.Spec.ClusterIP)
	}
	if _, err := e.kube.BatchV1().CronJobs(e.ns).Get(ctx, e.project+"-dev-cleanup", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}

	// Generating again gives the same spec: nothing to change.
	r := e.ok("preview", "--stack", stack, "-o", "json")
	var out struct {
		Changes []change `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Changes {
		if c.Action != "UnChanged" {
			t.Errorf("second preview: %s is %s %v", c.ID, c.Action, c.Fields)
		}
	}

	rel := e.release(0)
	if rel["stack"] != "dev" || rel["phase"] != "succeeded" {
		t.Errorf("release stack %v phase %v", rel["stack"], rel["phase"])
	}
	logs := e.ok("run", "logs", rel["runID"].(string)).stdout
	for _, want := range []string{
		"generator redis (app web, accessory cache): ran ./generators/redis",
		"| redis: " + e.ns + "/" + name + "-cache for app web",
		"applied apps/v1:Deployment:" + e.ns + ":" + name,
		"revision 1 succeeded",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("run log lacks %q:\n%s", want, logs)
		}
	}
}

// Test 2: a workspace's module defaults reach the generated spec; the app's own
// value wins.
func TestWorkspaceDefaultsInGenerate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stack := writeStack(t, e.project, "", `apps:
  web: {workload: {type: service, replicas: 2, containers: {web: {image: nginx}}}}
  api: {workload: {type: service, containers: {api: {image: api}}}}
`)
	ws := e.writeSpec("prod.yaml", "modules:\n  service: {config: {replicas: 3}}\n")
	e.ok("workspace", "create", "prod", "--file", ws)
	replicas := func(args ...string) map[string]any {
		var spec struct {
			Resources []struct {
				ID         string         `json:"id"`
				Attributes map[string]any `json:"attributes"`
			} `json:"resources"`
		}
		r := e.ok(append([]string{"generate", "--stack", stack, "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &spec); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, res := range spec.Resources {
			if s, ok := res.Attributes["spec"].(map[string]any); ok && s["replicas"] != nil {
				out[res.Attributes["metadata"].(map[string]any)["name"].(string)] = s["replicas"]
			}
		}
		return out
	}
	dev, prod := replicas(), replicas("--workspace", "prod")
	web, api := e.project+"-dev-web", e.project+"-dev-api"
	if dev[web] != 2.0 || dev[api] != 1.0 || prod[web] != 2.0 || prod[api] != 3.0 {
		t.Fatalf("replicas: default %v, prod %v; want web 2 in both, api 1 then 3", dev, prod)
	}
	e.fails([]string{"generate", "--stack", stack, "--workspace", "staging"}, `workspace "staging" does not exist`)
}

// Test 4: a generator that panics fails the run, naming the generator; the run
// log keeps its stack trace. Nothing is applied and no release is recorded.
func TestGeneratorPanicIsInRunLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gen := buildGo(t, "./testdata/panicgen")
	stack := writeStack(t, e.project, "generators:\n  boom: {command: ["+gen+"]}\n", `apps:
  web:
    workload: {type: service, containers: {web: {image: nginx}}}
    accessories:
      cache: {module: boom}
`)
	r := e.run("apply", "--yes", "--stack", stack)
	if r.code == 0 {
		t.Fatalf("apply succeeded: %s", r)
	}
	for _, want := range []string{"generator boom (app web, accessory cache): exited with status 2: panicgen: reading the request", "kumo run logs "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
	}
	runID := regexp.MustCompile(`kumo run logs (\S+)`).FindStringSubmatch(r.stderr)
	if runID == nil {
		t.Fatalf("no run ID in %s", r)
	}
	logs := e.ok("run", "logs", runID[1]).stdout
	for _, want := range []string{"panic: assignment to entry in nil map", "goroutine 1 [running]:", "main.main()", "generate failed: generator boom"} {
		if !strings.Contains(logs, want) {
			t.Errorf("run log lacks %q:\n%s", want, logs)
		}
	}
	if rows := e.releases(); len(rows) != 0 {
		t.Errorf("a failed generate recorded releases: %v", rows)
	}
	if _, err := e.kube.CoreV1().Namespaces().Get(context.Background(), e.ns, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s exists: something was applied", e.ns)
	}

	// A generator that hangs is stopped by --generator-timeout.
	slow := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stack = writeStack(t, e.project, "generators:\n  slow: {command: ["+slow+"]}\n",
		"apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {cache: {module: slow}}}}\n")
	e.fails([]string{"generate", "--stack", stack, "--generator-timeout", "500ms"}, "generator slow (app web, accessory cache): timed out after 500ms")
}

// Test 5: bad app files are reported with the file and field before anything runs.
func TestBadAppFilesApplyNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ app, want string }{
		{"apps: {web: {workload: {type: service, containers: {web: {image: nginx, imagePullPolicy: Always}}}}}", `apps.web.workload.containers.web: unknown field "imagePullPolicy"`},
		{"apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {db: {module: mysql}}}}", `apps.web.accessories.db.module: unknown module "mysql"`},
		{"apps: {web: {workload: {type: daemon, containers: {web: {image: nginx}}}}}", `apps.web.workload.type: unknown workload type "daemon"`},
		{"apps: {web: {workload: {type: service, containers: {web: {}}}}}", "apps.web.workload.containers.web.image: missing"},
	} {
		stack := writeStack(t, e.project, "", tc.app)
		e.fails([]string{"apply", "--yes", "--stack", stack}, filepath.Join(stack, "app.yaml")+": "+tc.want)
	}
	e.fails([]string{"apply", "--yes", "--stack", t.TempDir()}, "is not a stack")
	if rows := e.releases(); len(rows) != 0 {
		t.Errorf("bad files recorded releases: %v", rows)
	}
	if _, err := e.kube.CoreV1().Namespaces().Get(context.Background(), e.ns, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s exists: something was applied", e.ns)
	}
}

// Test 6: workspace commands round-trip through the backend.
func TestWorkspaceCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := e.writeSpec("staging.yaml", `modules:
  service: {config: {replicas: 2}}
generators:
  redis: {command: [/opt/gen/redis]}
runtimes:
  kubernetes: {context: staging}
context: {tier: staging}
`)
	e.ok("workspace", "create", "staging", "--file", file)
	e.fails([]string{"workspace", "create", "staging", "--file", file}, "workspace staging already exists")
	show := e.ok("workspace", "show", "staging", "-o", "json").stdout
	var ws map[string]any
	if err := json.Unmarshal([]byte(show), &ws); err != nil {
		t.Fatal(err)
	}
	if ws["name"] != "staging" || ws["context"].(map[string]any)["tier"] != "staging" ||
		ws["modules"].(map[string]any)["service"].(map[string]any)["config"].(map[string]any)["replicas"] != 2.0 {
		t.Errorf("workspace show: %s", show)
	}
	if got := e.ok("workspace", "list").stdout; got != "* default\n  staging\n" {
		t.Errorf("workspace list:\n%s", got)
	}
	e.ok("workspace", "update", "staging", "--file", e.writeSpec("s2.yaml", "context: {tier: two}\n"))
	if show := e.ok("workspace", "show", "staging").stdout; !strings.Contains(show, "tier: two") || strings.Contains(show, "replicas") {
		t.Errorf("after update:\n%s", show)
	}
	e.fails([]string{"workspace", "update", "qa", "--file", file}, "workspace qa does not exist")
	e.fails([]string{"workspace", "create", "bad", "--file", e.writeSpec("bad.yaml", "modules: {service: {config: {replica: 2}}}\n")},
		`bad.yaml: modules.service.config: unknown field "replica"`)
	e.fails([]string{"workspace", "delete", "default"}, "cannot be deleted")
	e.fails([]string{"workspace", "create", "../x", "--file", file}, "workspace name")

	// Switching makes it the workspace of commands without --workspace.
	e.ok("workspace", "switch", "staging")
	if got := e.ok("workspace", "list").stdout; got != "  default\n* staging\n" {
		t.Errorf("workspace list after switch:\n%s", got)
	}
	spec := e.writeSpec("spec.yaml", fmt.Sprintf("resources:\n%s%s", namespace(e.ns), configMap(e.ns, "a", "")))
	e.ok("apply", "--yes", "-f", spec)
	if rows := e.releases(); len(rows) != 1 {
		t.Fatalf("releases in the switched-to workspace: %v", rows)
	}
	e.fails([]string{"workspace", "delete", "staging"}, "workspace staging has releases of project(s) "+e.project, "--force")
	e.ok("workspace", "delete", "staging", "--force")
	if got := e.ok("workspace", "list").stdout; got != "* default\n" {
		t.Errorf("workspace list after delete:\n%s", got)
	}
	e.fails([]string{"workspace", "show", "staging"}, `workspace "staging" does not exist`)
}
