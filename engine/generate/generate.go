package generate

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kumoproj/kumo/engine"
)

// Input is everything one generation needs.
type Input struct {
	Source    *Source
	Workspace *engine.Workspace
	// Runner runs external generators (ExecRunner in production).
	Runner Runner
	// Parallelism bounds concurrent external generator calls (default 4).
	Parallelism int
	// Log receives what the run log keeps: a line per app and per generator call,
	// and each generator's stderr.
	Log io.Writer
}

// origin says where a generated resource came from, for duplicate-ID errors.
type origin string

type generation struct {
	in        Input
	ws        *engine.Workspace
	appFile   string
	log       io.Writer
	resources map[string]engine.Resource
	origins   map[string]origin
	calls     []*pendingCall
}

// pendingCall is an external generator call, made once every app is built so
// that calls run concurrently.
type pendingCall struct {
	call     Call
	workload *workload
	// envOwners is shared by the app's calls: who set each env var.
	envOwners map[string]string
	what      string
	result    CallResult
	err       error
}

// Generate turns a stack's apps and a workspace into a Spec: built-in modules
// produce Kubernetes objects, external generators add resources and patch
// workloads. The output depends only on the input: resources sorted by ID, lists in
// a fixed order. The Spec is validated; an error names the file and field, or the
// generator and app, at fault.
func Generate(ctx context.Context, in Input) (*engine.Spec, error) {
	g := &generation{
		in: in, ws: in.Workspace, log: in.Log,
		appFile:   filepath.Join(in.Source.Stack.Dir, AppFile),
		resources: map[string]engine.Resource{},
		origins:   map[string]origin{},
	}
	if g.ws == nil {
		g.ws = &engine.Workspace{Name: engine.DefaultWorkspace}
	}
	if errs := validation.IsValidLabelValue(g.ws.Name); len(errs) > 0 {
		return nil, fmt.Errorf("workspace %q cannot label the generated objects (kumo.io/workspace): %s", g.ws.Name, errs[0])
	}
	if g.log == nil {
		g.log = io.Discard
	}
	p, s := in.Source.Project, in.Source.Stack
	fmt.Fprintf(g.log, "generate: project %s, stack %s, workspace %s, %d apps\n", p.Name, s.Name, g.ws.Name, len(s.Apps))
	ns := namespaceResource(p.Name, p.Name)
	if err := g.add(ns, "the project namespace"); err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(s.Apps) {
		if err := g.app(name, s.Apps[name]); err != nil {
			return nil, err
		}
	}
	if err := g.runCalls(ctx); err != nil {
		return nil, err
	}
	spec := &engine.Spec{Resources: make([]engine.Resource, 0, len(g.resources)), Moved: s.Moved}
	for _, id := range sortedKeys(g.resources) {
		spec.Resources = append(spec.Resources, g.resources[id])
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("generated spec of stack %s: %w", s.Dir, err)
	}
	fmt.Fprintf(g.log, "generate: %d resources\n", len(spec.Resources))
	return spec, nil
}

func (g *generation) add(r engine.Resource, from origin) error {
	if prev, dup := g.origins[r.ID]; dup {
		return fmt.Errorf("resource %s is generated twice: by %s and by %s", r.ID, prev, from)
	}
	g.resources[r.ID] = r
	g.origins[r.ID] = from
	return nil
}

// moduleDefaults returns the workspace's config for a module, checked on its own
// so that a bad default is reported against the workspace, not the app.
func (g *generation) moduleDefaults(module string, check func(path string, config map[string]any) error) (map[string]any, error) {
	defaults := moduleConfig(g.ws, module)
	if check != nil && len(defaults) > 0 {
		if err := check(fmt.Sprintf("modules.%s.config", module), defaults); err != nil {
			return nil, fmt.Errorf("workspace %s: %w", g.ws.Name, err)
		}
	}
	return defaults, nil
}

func (g *generation) app(name string, app App) error {
	s := g.in.Source.Stack
	p := g.in.Source.Project
	a := newAppContext(p.Name, s.Name, g.ws.Name, name, p.Name)
	path := "apps." + name
	fileErr := func(err error) error { return fmt.Errorf("%s: %w", g.appFile, err) }
	if len(a.name) > validation.DNS1123LabelMaxLength {
		return fileErr(errorAt(path, "the generated name %s (<project>-<stack>-<app>) is %d characters; Kubernetes allows %d for a Service: shorten the project, stack or app name",
			a.name, len(a.name), validation.DNS1123LabelMaxLength))
	}

	typ, _ := app.Workload["type"].(string)
	check := workloadCheck(typ)
	if check != nil {
		if err := check(join(path, "workload"), app.Workload); err != nil {
			return fileErr(err)
		}
	}
	defaults, err := g.moduleDefaults(typ, check)
	if err != nil {
		return err
	}
	w, err := buildWorkload(a, join(path, "workload"), merge(defaults, app.Workload))
	if err != nil {
		return fileErr(err)
	}
	if err := g.add(w.res, origin(fmt.Sprintf("app %s (workload)", name))); err != nil {
		return fileErr(err)
	}
	generated := []string{w.res.ID}

	envOwners := map[string]string{}
	for _, c := range w.containers {
		for _, e := range asList(c["env"]) {
			envOwners[e.(map[string]any)["name"].(string)] = "app " + name
		}
	}
	for _, accName := range sortedKeys(app.Accessories) {
		acc := app.Accessories[accName]
		accPath := join(join(path, "accessories"), accName)
		module, _ := acc["module"].(string)
		if module == "" {
			return fileErr(errorAt(join(accPath, "module"), "missing: name the module that generates this accessory"))
		}
		config := maps.Clone(acc)
		delete(config, "module")
		if fn := accessories[module]; fn != nil {
			check := accessoryCheck(module)
			if err := check(accPath, config); err != nil {
				return fileErr(err)
			}
			defaults, err := g.moduleDefaults(module, check)
			if err != nil {
				return err
			}
			rs, err := fn(a, accPath, w, merge(defaults, config))
			if err != nil {
				return fileErr(err)
			}
			for _, r := range rs {
				if err := g.add(r, origin(fmt.Sprintf("app %s (accessory %s)", name, accName))); err != nil {
					return fileErr(err)
				}
				generated = append(generated, r.ID)
			}
			continue
		}
		decl, dir, ok := g.generator(module)
		if !ok {
			return fileErr(errorAt(join(accPath, "module"), "unknown module %q: %s", module, g.knownModules()))
		}
		defaults, _ := g.moduleDefaults(module, nil)
		g.calls = append(g.calls, &pendingCall{
			call: Call{Generator: module, Command: decl.Command, Dir: dir, Request: Request{
				Project: p.Name, Stack: s.Name, Workspace: g.ws.Name, App: name, Name: a.name, Namespace: a.namespace,
				Labels: maps.Clone(a.labels), Workload: merge(defaults, app.Workload), WorkloadID: w.res.ID,
				Accessory: AccessoryRequest{Name: accName, Module: module, Config: acc},
				Config:    merge(defaults, config), Context: g.ws.Context,
			}},
			workload: w, envOwners: envOwners,
			what: fmt.Sprintf("generator %s (app %s, accessory %s)", module, name, accName),
		})
	}
	fmt.Fprintf(g.log, "app %s: %s\n", name, strings.Join(generated, ", "))
	return nil
}

// generator finds an external generator: the project's declaration first, then
// the workspace's. Commands run in the project directory.
func (g *generation) generator(module string) (engine.GeneratorDecl, string, bool) {
	if d, ok := g.in.Source.Project.Generators[module]; ok {
		return d, g.in.Source.Project.Dir, true
	}
	d, ok := g.ws.Generators[module]
	return d, g.in.Source.Project.Dir, ok
}

func (g *generation) knownModules() string {
	msg := "built in are service and job (workloads), network and kubernetes (accessories)"
	declared := slices.Sorted(maps.Keys(g.in.Source.Project.Generators))
	declared = append(declared, slices.Sorted(maps.Keys(g.ws.Generators))...)
	slices.Sort(declared)
	declared = slices.Compact(declared)
	if len(declared) == 0 {
		return msg + "; declare an external generator under generators in project.yaml or the workspace"
	}
	return msg + "; declared generators are " + strings.Join(declared, ", ")
}

// runCalls runs the external generator calls concurrently, then applies their
// results in declaration order, so the Spec does not depend on which finished first.
func (g *generation) runCalls(ctx context.Context) error {
	if len(g.calls) == 0 {
		return nil
	}
	// Every call is checked before any runs: one untrusted generator stops
	// the generation before the trusted ones have run for nothing.
	if checker, ok := g.in.Runner.(interface{ Check(Call) error }); ok {
		for _, c := range g.calls {
			if err := checker.Check(c.call); err != nil {
				fmt.Fprintf(g.log, "%s: error: %v\n", c.what, err)
				return fmt.Errorf("%s: %w", c.what, err)
			}
		}
	}
	limit := g.in.Parallelism
	if limit <= 0 {
		limit = 4
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, c := range g.calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c.result, c.err = g.in.Runner.Run(ctx, c.call)
		}()
	}
	wg.Wait()
	var first error
	for _, c := range g.calls {
		err := g.applyCall(c)
		if err != nil {
			fmt.Fprintf(g.log, "%s: error: %v\n", c.what, err)
			if first == nil {
				first = fmt.Errorf("%s: %w", c.what, err)
			}
		}
	}
	return first
}

// applyCall logs one call and merges its response.
func (g *generation) applyCall(c *pendingCall) error {
	fmt.Fprintf(g.log, "%s: ran %s in %s\n", c.what, strings.Join(c.call.Command, " "), c.result.Elapsed.Round(1e6))
	if len(c.result.Stderr) > 0 {
		fmt.Fprintf(g.log, "%s: stderr:\n%s", c.what, indent(c.result.Stderr))
	}
	if c.err != nil {
		return c.err
	}
	resp, err := parseResponse(c.result.Stdout)
	if err != nil {
		return err
	}
	var ids []string
	for _, r := range resp.Resources {
		if err := g.add(r, origin(c.what)); err != nil {
			return err
		}
		ids = append(ids, r.ID)
	}
	if err := c.workload.patch(resp.Patches, c.envOwners, c.what); err != nil {
		return err
	}
	fmt.Fprintf(g.log, "%s: %d resources %s\n", c.what, len(ids), strings.Join(ids, ", "))
	return nil
}

func indent(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return "  | " + strings.Join(lines, "\n  | ") + "\n"
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// workloadCheck decodes a workload config of type typ on its own, to report
// unknown or mistyped fields where they were written; nil for an unknown type
// (buildWorkload reports it).
func workloadCheck(typ string) func(path string, config map[string]any) error {
	switch typ {
	case ServiceModule:
		return func(path string, config map[string]any) error { return decode(path, config, &ServiceWorkload{}) }
	case JobModule:
		return func(path string, config map[string]any) error { return decode(path, config, &JobWorkload{}) }
	}
	return nil
}

// moduleCheck is workloadCheck or accessoryCheck, whichever knows module; nil
// for an external generator's module, whose schema only the generator knows.
func moduleCheck(module string) func(path string, config map[string]any) error {
	if check := workloadCheck(module); check != nil {
		return check
	}
	return accessoryCheck(module)
}

// moduleConfig is a workspace's config for module, without the keys that pick a
// module (type, module): those are the app's to say.
func moduleConfig(ws *engine.Workspace, module string) map[string]any {
	config := maps.Clone(ws.Modules[module].Config)
	delete(config, "type")
	delete(config, "module")
	return config
}

func accessoryCheck(module string) func(path string, config map[string]any) error {
	switch module {
	case NetworkModule:
		return func(path string, config map[string]any) error { return decode(path, config, &Network{}) }
	case KubernetesModule:
		return func(path string, config map[string]any) error { return decode(path, config, &Passthrough{}) }
	}
	return nil
}
