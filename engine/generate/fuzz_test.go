package generate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// The readers of a platform team's workspace file and a developer's app.yaml
// never panic, and what they accept generates a Spec that is valid, or an
// error. External generators are never run: a fuzzed file may name any command.

// noExternal is a Runner that runs nothing.
type noExternal struct{}

func (noExternal) Run(context.Context, Call) (CallResult, error) {
	return CallResult{}, errors.New("external generators do not run while fuzzing")
}

// fuzzSeeds adds the example project's files and the given documents to f.
func fuzzSeeds(f *testing.F, example string, docs ...string) {
	if data, err := os.ReadFile(filepath.Join("..", "..", "examples", "shop", example)); err == nil {
		f.Add(data)
	}
	for _, d := range docs {
		f.Add([]byte(d))
	}
}

// checkGenerated generates the stack with ws and checks the outcome.
func checkGenerated(t *testing.T, src *Source, ws *engine.Workspace) {
	spec, err := Generate(context.Background(), Input{Source: src, Workspace: ws, Runner: noExternal{}})
	if err != nil {
		return
	}
	if err := spec.Validate(); err != nil {
		t.Fatalf("generated an invalid spec: %v", err)
	}
	if _, err := engine.MarshalSpec(spec); err != nil {
		t.Fatalf("generated a spec that does not marshal: %v", err)
	}
}

func FuzzParseWorkspace(f *testing.F) {
	fuzzSeeds(f, "workspaces/prod.yaml",
		"modules: {service: {config: {replicas: 2}}, network: {config: {type: NodePort}}}\ncontext: {a: 1}\n",
		"runtimes: {kubernetes: {kubeconfig: k, context: c}, terraform: {binary: tofu, pluginDir: /m}}\n",
		"generators: {redis: {command: [./r]}}\ndrift: {ignore: [{kind: Deployment, paths: [spec.replicas]}]}\n",
		"name: prod\nmodules: &m {service: {config: {replicas: 1}}}\ncontext: *m\n")
	stack := writeProject(f, "name: shop\n", webApp)
	src, err := Load(stack)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, err := ParseWorkspace(data, "ws.yaml", "prod")
		if err != nil {
			return
		}
		if _, err := json.Marshal(ws); err != nil {
			t.Fatalf("accepted a workspace that does not marshal: %v", err)
		}
		checkGenerated(t, src, ws)
	})
}

func FuzzAppConfig(f *testing.F) {
	fuzzSeeds(f, "dev/app.yaml", webApp, webAppReordered,
		"apps: {j: {workload: {type: job, schedule: '* * * * *', containers: {c: {image: x, command: [a]}}}}}\n",
		"apps: {w: {workload: {type: service, containers: {c: {image: x}}}, accessories: {r: {module: kubernetes, manifests: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]}}}}\n")
	stack := writeProject(f, "name: shop\n", webApp)
	app := filepath.Join(stack, AppFile)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(app, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Load(stack)
		if err != nil {
			return
		}
		checkGenerated(t, src, nil)
	})
}
