package generate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// writeProject writes a project with one stack "dev" and returns the stack dir.
func writeProject(t testing.TB, project, app string) string {
	t.Helper()
	dir := t.TempDir()
	stack := filepath.Join(dir, "dev")
	if err := os.MkdirAll(stack, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ProjectFile), project)
	write(t, filepath.Join(stack, StackFile), "name: dev\n")
	write(t, filepath.Join(stack, AppFile), app)
	return stack
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func generateStack(t *testing.T, stackDir string, ws *engine.Workspace, runner Runner) (*engine.Spec, error) {
	t.Helper()
	src, err := Load(stackDir)
	if err != nil {
		return nil, err
	}
	if runner == nil {
		runner = ExecRunner{Trust: trustEverything}
	}
	return Generate(context.Background(), Input{Source: src, Workspace: ws, Runner: runner})
}

func mustGenerate(t *testing.T, stackDir string, ws *engine.Workspace) *engine.Spec {
	t.Helper()
	spec, err := generateStack(t, stackDir, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func marshal(t *testing.T, s *engine.Spec) string {
	t.Helper()
	out, err := engine.MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func resourceOf(t *testing.T, s *engine.Spec, id string) *engine.Resource {
	t.Helper()
	for i := range s.Resources {
		if s.Resources[i].ID == id {
			return &s.Resources[i]
		}
	}
	t.Fatalf("no resource %s in spec; have %v", id, ids(s))
	return nil
}

func ids(s *engine.Spec) []string {
	var out []string
	for _, r := range s.Resources {
		out = append(out, r.ID)
	}
	return out
}

func lookup(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %s: not a mapping: %v", p, v)
		}
		v = m[p]
	}
	return v
}

const webApp = `apps:
  web:
    workload:
      type: service
      replicas: 2
      containers:
        web:
          image: nginx:1.27
          env: {LOG_LEVEL: info, PORT: 8080}
          resources: {cpu: 250m, memory: 256Mi}
          readinessProbe: {httpGet: {path: /, port: 80}}
    accessories:
      network: {module: network, ports: [{port: 80, targetPort: 8080}]}
  api:
    workload:
      type: service
      containers:
        api: {image: api:1}
`

// The same apps with every mapping's keys in another order.
const webAppReordered = `apps:
  api:
    workload:
      containers:
        api: {image: api:1}
      type: service
  web:
    accessories:
      network: {ports: [{targetPort: 8080, port: 80}], module: network}
    workload:
      containers:
        web:
          readinessProbe: {httpGet: {port: 80, path: /}}
          resources: {memory: 256Mi, cpu: 250m}
          env: {PORT: 8080, LOG_LEVEL: info}
          image: nginx:1.27
      replicas: 2
      type: service
`

func TestGenerateIsStableAcrossRunsAndKeyOrder(t *testing.T) {
	a := marshal(t, mustGenerate(t, writeProject(t, "name: shop\n", webApp), nil))
	b := marshal(t, mustGenerate(t, writeProject(t, "name: shop\n", webApp), nil))
	c := marshal(t, mustGenerate(t, writeProject(t, "name: shop\n", webAppReordered), nil))
	if a != b {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
	}
	if a != c {
		t.Fatalf("reordered keys give another spec:\n%s\n---\n%s", a, c)
	}
}

func TestGenerateBuiltins(t *testing.T) {
	spec := mustGenerate(t, writeProject(t, "name: shop\n", webApp), nil)
	want := []string{
		"apps/v1:Deployment:shop:shop-dev-api", "apps/v1:Deployment:shop:shop-dev-web",
		"v1:Namespace:shop", "v1:Service:shop:shop-dev-web",
	}
	if got := ids(spec); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("resources %v, want %v (sorted by ID)", got, want)
	}
	web := resourceOf(t, spec, "apps/v1:Deployment:shop:shop-dev-web")
	if got := strings.Join(web.DependsOn, ","); got != "v1:Namespace:shop" {
		t.Errorf("deployment dependsOn %s, want the namespace", got)
	}
	labels := lookup(t, web.Attributes, "metadata", "labels").(map[string]any)
	for k, v := range map[string]string{LabelName: "web", LabelPartOf: "shop", LabelStack: "dev", LabelWorkspace: "default"} {
		if labels[k] != v {
			t.Errorf("label %s = %v, want %s", k, labels[k], v)
		}
	}
	if r := lookup(t, web.Attributes, "spec", "replicas"); r != int64(2) {
		t.Errorf("replicas %v (%T), want int64 2", r, r)
	}
	c := lookup(t, web.Attributes, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	env := c["env"].([]any)
	if len(env) != 2 || env[0].(map[string]any)["name"] != "LOG_LEVEL" || env[1].(map[string]any)["value"] != "8080" {
		t.Errorf("env %v, want LOG_LEVEL then PORT=\"8080\"", env)
	}
	if got := lookup(t, c, "resources", "limits", "memory"); got != "256Mi" {
		t.Errorf("memory limit %v", got)
	}
	svc := resourceOf(t, spec, "v1:Service:shop:shop-dev-web")
	port := lookup(t, svc.Attributes, "spec", "ports").([]any)[0].(map[string]any)
	if port["port"] != int64(80) || port["targetPort"] != int64(8080) || port["protocol"] != "TCP" {
		t.Errorf("service port %v", port)
	}
	selector := lookup(t, svc.Attributes, "spec", "selector").(map[string]any)
	matchLabels := lookup(t, web.Attributes, "spec", "selector", "matchLabels").(map[string]any)
	if len(selector) != len(matchLabels) || selector[LabelName] != "web" {
		t.Errorf("service selector %v does not match the deployment's %v", selector, matchLabels)
	}
	if got := strings.Join(svc.DependsOn, ","); got != "v1:Namespace:shop,apps/v1:Deployment:shop:shop-dev-web" {
		t.Errorf("service dependsOn %s", got)
	}
}

func TestWorkspaceDefaultsChangeOnlyWhatTheyName(t *testing.T) {
	stack := writeProject(t, "name: shop\n", webApp)
	dev := mustGenerate(t, stack, nil)
	prod := mustGenerate(t, stack, &engine.Workspace{Name: "prod", Modules: map[string]engine.ModuleDefaults{
		"service": {Config: map[string]any{"replicas": int64(3)}},
	}})
	// api has no replicas of its own: the workspace's 3 applies. web says 2: it wins.
	if r := lookup(t, resourceOf(t, prod, "apps/v1:Deployment:shop:shop-dev-api").Attributes, "spec", "replicas"); r != int64(3) {
		t.Errorf("api replicas in prod = %v, want the workspace's 3", r)
	}
	if r := lookup(t, resourceOf(t, prod, "apps/v1:Deployment:shop:shop-dev-web").Attributes, "spec", "replicas"); r != int64(2) {
		t.Errorf("web replicas in prod = %v, want the app's own 2", r)
	}
	// Apart from replicas and the workspace label, nothing differs.
	normalize := func(s string) string {
		s = strings.ReplaceAll(s, "kumo.io/workspace: prod", "kumo.io/workspace: default")
		return strings.Replace(s, "replicas: 3", "replicas: 1", 1)
	}
	if d, p := marshal(t, dev), normalize(marshal(t, prod)); d != p {
		t.Fatalf("prod differs from dev beyond replicas:\n%s\n---\n%s", d, p)
	}
}

func TestJobsAndPassthrough(t *testing.T) {
	spec := mustGenerate(t, writeProject(t, "name: shop\n", `apps:
  once:
    workload:
      type: job
      containers: {main: {image: busybox, command: [echo, hi]}}
  nightly:
    workload:
      type: job
      schedule: "0 3 * * *"
      containers: {main: {image: busybox}}
    accessories:
      raw:
        module: kubernetes
        manifests:
          - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg, labels: {team: a}}, data: {k: v}}
          - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader}, rules: []}
          - {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: other}}
`), nil)
	job := resourceOf(t, spec, "batch/v1:Job:shop:shop-dev-once")
	if got := lookup(t, job.Attributes, "spec", "template", "spec", "restartPolicy"); got != "Never" {
		t.Errorf("job restartPolicy %v", got)
	}
	cron := resourceOf(t, spec, "batch/v1:CronJob:shop:shop-dev-nightly")
	if got := lookup(t, cron.Attributes, "spec", "schedule"); got != "0 3 * * *" {
		t.Errorf("cron schedule %v", got)
	}
	cm := resourceOf(t, spec, "v1:ConfigMap:shop:cfg")
	if got := lookup(t, cm.Attributes, "metadata", "labels", "team"); got != "a" {
		t.Errorf("passthrough lost the user's label: %v", got)
	}
	if got := lookup(t, cm.Attributes, "metadata", "labels", LabelPartOf); got != "shop" {
		t.Errorf("passthrough without kumo's labels: %v", got)
	}
	resourceOf(t, spec, "rbac.authorization.k8s.io/v1:ClusterRole:reader")
	if s := resourceOf(t, spec, "v1:Secret:other:s"); len(s.DependsOn) != 0 {
		t.Errorf("an object in another namespace depends on %v", s.DependsOn)
	}
}

// TestBadAppFiles: every mistake is reported with the file and the field path.
func TestBadAppFiles(t *testing.T) {
	cases := []struct {
		name, app string
		want      []string
	}{
		{"unknown module", `apps: {web: {workload: {type: service, containers: {web: {image: x}}}, accessories: {db: {module: postgres}}}}`,
			[]string{"apps.web.accessories.db.module", `unknown module "postgres"`}},
		{"unknown workload type", `apps: {web: {workload: {type: daemon, containers: {web: {image: x}}}}}`,
			[]string{"apps.web.workload.type", `unknown workload type "daemon"`}},
		{"missing image", `apps: {web: {workload: {type: service, containers: {web: {env: {A: b}}}}}}`,
			[]string{"apps.web.workload.containers.web.image", "missing"}},
		{"unknown field", `apps: {web: {workload: {type: service, containers: {web: {image: x, imagePullPolicy: Always}}}}}`,
			[]string{"apps.web.workload.containers.web", `unknown field "imagePullPolicy"`}},
		{"unknown top-level field", `apps: {web: {workload: {type: service, containers: {web: {image: x}}}}}
app: {}`, []string{`unknown field "app"`}},
		{"mistyped", `apps: {web: {workload: {type: service, replicas: two, containers: {web: {image: x}}}}}`,
			[]string{"apps.web.workload.replicas", "want a whole number"}},
		{"bad quantity", `apps: {web: {workload: {type: service, containers: {web: {image: x, resources: {cpu: lots}}}}}}`,
			[]string{"apps.web.workload.containers.web.resources.cpu", "not a quantity"}},
		{"bad port", `apps: {web: {workload: {type: service, containers: {web: {image: x}}}, accessories: {net: {module: network, ports: [{port: 70000}]}}}}`,
			[]string{"apps.web.accessories.net.ports[0].port", "between 1 and 65535"}},
		{"job with replicas", `apps: {web: {workload: {type: job, replicas: 2, containers: {web: {image: x}}}}}`,
			[]string{"apps.web.workload", `unknown field "replicas"`}},
		{"no apps", `apps: {}`, []string{"apps: no apps declared"}},
		{"bad app name", `apps: {Web_1: {workload: {type: service, containers: {web: {image: x}}}}}`, []string{"apps.Web_1", "not a valid name"}},
		{"manifest without name", `apps: {web: {workload: {type: service, containers: {web: {image: x}}}, accessories: {r: {module: kubernetes, manifests: [{apiVersion: v1, kind: ConfigMap, metadata: {}}]}}}}`,
			[]string{"apps.web.accessories.r.manifests[0]", "metadata.name"}},
		{"yaml syntax", "apps:\n  web: [\n", []string{"yaml"}},
		{"name too long", "apps: {" + strings.Repeat("w", 60) + ": {workload: {type: service, containers: {web: {image: x}}}}}",
			[]string{"apps." + strings.Repeat("w", 60), "is 69 characters; Kubernetes allows 63"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stack := writeProject(t, "name: shop\n", tc.app)
			_, err := generateStack(t, stack, nil, nil)
			if err == nil {
				t.Fatal("generated; want an error")
			}
			for _, w := range append([]string{filepath.Join(stack, AppFile)}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBadProjectAndWorkspace(t *testing.T) {
	stack := writeProject(t, "name: Shop!\n", webApp)
	if _, err := Load(stack); err == nil || !strings.Contains(err.Error(), "project.yaml: name") {
		t.Errorf("bad project name: %v", err)
	}
	stack = writeProject(t, "name: shop\ngenerators: {network: {command: [x]}}\n", webApp)
	if _, err := Load(stack); err == nil || !strings.Contains(err.Error(), "built-in module") {
		t.Errorf("generator replacing a built-in: %v", err)
	}
	// A project names its webhook; only the workspace allows where it may go.
	stack = writeProject(t, "name: shop\ndrift: {webhook: {url: http://10.0.0.1/h, allowPrivate: true}}\n", webApp)
	if _, err := Load(stack); err == nil || !strings.Contains(err.Error(), "project.yaml: drift.webhook: allowPrivate and allowedHosts belong in the workspace") {
		t.Errorf("project allowing a private webhook: %v", err)
	}
	stack = writeProject(t, "name: shop\n", webApp)
	_, err := generateStack(t, stack, &engine.Workspace{Name: "prod", Modules: map[string]engine.ModuleDefaults{
		"service": {Config: map[string]any{"replica": int64(3)}},
	}}, nil)
	if err == nil || !strings.Contains(err.Error(), "workspace prod: modules.service.config") || !strings.Contains(err.Error(), `unknown field "replica"`) {
		t.Errorf("bad workspace default: %v", err)
	}
	_, err = generateStack(t, stack, &engine.Workspace{Name: strings.Repeat("p", 64)}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot label the generated objects") {
		t.Errorf("workspace name too long for a label: %v", err)
	}
	if _, err := Load(filepath.Dir(stack)); err == nil || !strings.Contains(err.Error(), "not a stack") {
		t.Errorf("project dir as stack: %v", err)
	}
}

func TestParseWorkspace(t *testing.T) {
	ws, err := ParseWorkspace([]byte(`
modules:
  service: {config: {replicas: 3}}
  redis: {config: {anything: [1, 2]}}
generators:
  redis: {command: [./gen/redis, --fast]}
runtimes:
  kubernetes: {kubeconfig: /k, context: prod, kubeconfigs: {edge: /etc/edge.yaml}, allowExecPlugins: true}
  terraform: {binary: tofu}
context: {tier: prod}
`), "prod.yaml", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Name != "prod" || ws.Modules["service"].Config["replicas"] != int64(3) || ws.Generators["redis"].Command[1] != "--fast" ||
		ws.Runtimes.Kubernetes.Context != "prod" || ws.Runtimes.Kubernetes.Kubeconfigs["edge"] != "/etc/edge.yaml" || !ws.Runtimes.Kubernetes.AllowExecPlugins || ws.Runtimes.Terraform.Binary != "tofu" || ws.Context["tier"] != "prod" {
		t.Fatalf("parsed %+v", ws)
	}
	for _, tc := range []struct{ file, want string }{
		{"modules: {service: {config: {replicas: many}}}", "prod.yaml: modules.service.config.replicas: want a whole number"},
		{"runtime: {}", `prod.yaml: unknown field "runtime"`},
		{"runtimes: {kubernetes: {kubeConfig: x}}", `prod.yaml: runtimes.kubernetes: unknown field "kubeConfig"`},
		{"name: dev", `the file is for workspace "dev"`},
		{"runtimes: {kubernetes: {kubeconfigs: {edge: ''}}}", `prod.yaml: runtimes.kubernetes.kubeconfigs: "edge": "": a cluster needs a name and a kubeconfig path`},
		{"generators: {redis: {command: []}}", "generators.redis.command: missing"},
	} {
		if _, err := ParseWorkspace([]byte(tc.file), "prod.yaml", "prod"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.want)
		}
	}
}
