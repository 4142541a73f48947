package generate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
)

const cacheApp = `apps:
  web:
    workload:
      type: service
      containers: {web: {image: nginx, env: {LOG_LEVEL: info}}}
    accessories:
      cache: {module: gen, size: small}
`

// generatorProject writes a project whose generator "gen" is the shell script
// script, and returns the stack dir.
func generatorProject(t *testing.T, script string) string {
	t.Helper()
	stack := writeProject(t, "name: shop\ngenerators:\n  gen: {command: [./gen.sh, arg1]}\n", cacheApp)
	write(t, filepath.Join(filepath.Dir(stack), "gen.sh"), "#!/bin/sh\n"+script)
	return stack
}

const goodResponse = `cat > /dev/null
echo "making a cache" >&2
cat <<'JSON'
{"resources": [
  {"id": "v1:Service:shop:cache", "type": "Kubernetes", "dependsOn": ["v1:Namespace:shop"],
   "attributes": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cache", "namespace": "shop"}, "spec": {"ports": [{"port": 6379}]}}}
 ],
 "patches": {"env": {"CACHE_HOST": "$kumo_path.v1:Service:shop:cache.spec.clusterIP"},
             "labels": {"cache": "yes"}, "annotations": {"cache.io/size": "small"}}}
JSON
`

func TestExternalGenerator(t *testing.T) {
	stack := generatorProject(t, goodResponse)
	var log strings.Builder
	src, err := Load(stack)
	if err != nil {
		t.Fatal(err)
	}
	ws := &engine.Workspace{Name: "prod", Modules: map[string]engine.ModuleDefaults{"gen": {Config: map[string]any{"size": "big", "zone": "a"}}}, Context: map[string]any{"tier": "prod"}}
	var seen Request
	spec, err := Generate(context.Background(), Input{Source: src, Workspace: ws, Log: &log, Runner: recordingRunner{ExecRunner{Trust: trustEverything}, &seen}})
	if err != nil {
		t.Fatal(err)
	}
	// The request carries the merged module config: the accessory's size wins
	// over the workspace's, the workspace's zone stays.
	if seen.Config["size"] != "small" || seen.Config["zone"] != "a" || seen.Config["module"] != nil {
		t.Errorf("request config %v", seen.Config)
	}
	if seen.App != "web" || seen.Workspace != "prod" || seen.Name != "shop-dev-web" || seen.Namespace != "shop" ||
		seen.WorkloadID != "apps/v1:Deployment:shop:shop-dev-web" || seen.Context["tier"] != "prod" || seen.Accessory.Name != "cache" {
		t.Errorf("request %+v", seen)
	}
	resourceOf(t, spec, "v1:Service:shop:cache")
	web := resourceOf(t, spec, "apps/v1:Deployment:shop:shop-dev-web")
	c := lookup(t, web.Attributes, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	env := c["env"].([]any)
	if len(env) != 2 || env[0].(map[string]any)["value"] != "$kumo_path.v1:Service:shop:cache.spec.clusterIP" {
		t.Errorf("env %v, want CACHE_HOST (sorted first) as a reference", env)
	}
	if lookup(t, web.Attributes, "metadata", "labels", "cache") != "yes" ||
		lookup(t, web.Attributes, "spec", "template", "metadata", "annotations", "cache.io/size") != "small" {
		t.Errorf("labels/annotations not patched: %v", web.Attributes)
	}
	// The reference is an implicit edge: the spec validates and orders it.
	if _, err := spec.Graph(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"generator gen (app web, accessory cache): ran ./gen.sh arg1", "| making a cache", "1 resources v1:Service:shop:cache"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

type recordingRunner struct {
	Runner
	req *Request
}

func (r recordingRunner) Run(ctx context.Context, c Call) (CallResult, error) {
	*r.req = c.Request
	return r.Runner.Run(ctx, c)
}

// TestGeneratorFailures: each way a generator can fail names the generator and
// the app, and its stderr reaches the log.
func TestGeneratorFailures(t *testing.T) {
	cases := []struct {
		name, script string
		timeout      time.Duration
		want, log    string
	}{
		{"non-zero exit", "echo 'cannot reach the registry' >&2; exit 3", 0, "exited with status 3: cannot reach the registry", "| cannot reach the registry"},
		{"timeout", "echo started >&2; sleep 30", 300 * time.Millisecond, "timed out after 300ms", "| started"},
		{"malformed JSON", "echo '{\"resources\": [' ", 0, "printed invalid JSON on stdout", ""},
		{"nothing printed", "true", 0, "printed nothing on stdout", ""},
		{"unknown response field", `echo '{"resources": [], "patch": {}}'`, 0, `unknown field "patch"`, ""},
		{"duplicate ID", `cat <<'JSON'
{"resources": [{"id": "v1:Namespace:shop", "type": "Kubernetes", "attributes": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}}]}
JSON`, 0, "resource v1:Namespace:shop is generated twice: by the project namespace and by generator gen (app web, accessory cache)", ""},
		{"ID not matching object", `cat <<'JSON'
{"resources": [{"id": "v1:Service:shop:x", "type": "Kubernetes", "attributes": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "y", "namespace": "shop"}}}]}
JSON`, 0, `response.resources[0].id: "v1:Service:shop:x" does not match its object`, ""},
		{"env conflict", `echo '{"resources": [], "patches": {"env": {"LOG_LEVEL": "debug"}}}'`, 0, "patches env LOG_LEVEL, which app web already sets", ""},
		{"missing executable", "", 0, "could not run", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stack := generatorProject(t, tc.script)
			if tc.name == "missing executable" {
				stack = writeProject(t, "name: shop\ngenerators:\n  gen: {command: [./nope]}\n", cacheApp)
			}
			src, err := Load(stack)
			if err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			start := time.Now()
			_, err = Generate(context.Background(), Input{Source: src, Runner: ExecRunner{Timeout: tc.timeout, Trust: trustEverything}, Log: &log})
			if err == nil {
				t.Fatal("generated; want an error")
			}
			if tc.timeout > 0 && time.Since(start) > 10*time.Second {
				t.Errorf("the timeout did not stop the generator (%s)", time.Since(start))
			}
			for _, want := range []string{"generator gen (app web, accessory cache): ", tc.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if !strings.Contains(log.String(), "error: ") || !strings.Contains(log.String(), tc.log) {
				t.Errorf("log lacks the error or %q:\n%s", tc.log, log.String())
			}
		})
	}
}
