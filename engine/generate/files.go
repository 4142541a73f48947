package generate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/input"
)

// File names in a project.
const (
	ProjectFile = "project.yaml"
	StackFile   = "stack.yaml"
	AppFile     = "app.yaml"
)

// Project is project.yaml: the directory that holds a project's stacks.
type Project struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Generators declares external generators for this project's apps; they take
	// precedence over a workspace's declaration of the same name.
	Generators map[string]engine.GeneratorDecl `json:"generators,omitempty"`
	// Backend is where the project's releases live (s3://bucket[/prefix], ...);
	// --backend and KUMO_BACKEND take precedence. Empty: $KUMO_HOME.
	Backend string `json:"backend,omitempty"`
	// Drift adds ignore rules (after the workspace's) to this project's drift
	// checks, and may set how many reports they keep.
	Drift drift.Config `json:"drift,omitzero"`
	// Dir is the absolute project directory.
	Dir string `json:"-"`
}

// Stack is stack.yaml plus the app configuration next to it.
type Stack struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Moved are resources an earlier apply recorded under another ID
	// (Terraform's moved {}): the generated spec carries them.
	Moved []engine.Moved `json:"moved,omitempty"`
	// Dir is the absolute stack directory.
	Dir string `json:"-"`
	// Apps is app.yaml's apps, by name.
	Apps map[string]App `json:"-"`
}

// App is one application of app.yaml: a workload and its accessories. Both stay
// plain values until they are merged with the workspace's module defaults, so
// that an unknown field is reported where it was written.
type App struct {
	Workload    map[string]any            `json:"workload"`
	Accessories map[string]map[string]any `json:"accessories,omitempty"`
}

type appFile struct {
	Apps map[string]App `json:"apps"`
}

// Source is everything a Generate reads from disk.
type Source struct {
	Project *Project
	Stack   *Stack
}

// Load reads the stack in dir (which holds stack.yaml and app.yaml) and the project
// it belongs to: the nearest directory above it with project.yaml.
func Load(dir string) (*Source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", dir, err)
	}
	stack, err := loadStack(abs)
	if err != nil {
		return nil, err
	}
	projectDir, err := FindProject(filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", abs, err)
	}
	project, err := LoadProject(projectDir)
	if err != nil {
		return nil, err
	}
	return &Source{Project: project, Stack: stack}, nil
}

// FindProject returns the nearest directory at or above dir holding project.yaml.
func FindProject(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ProjectFile)); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s in %s or any directory above it", ProjectFile, dir)
		}
	}
}

// LoadProject reads dir/project.yaml.
func LoadProject(dir string) (*Project, error) {
	path := filepath.Join(dir, ProjectFile)
	var p Project
	if err := readFile(path, &p); err != nil {
		return nil, err
	}
	p.Dir = dir
	if err := dnsLabel(p.Name); err != nil {
		return nil, fmt.Errorf("%s: name: %w", path, err)
	}
	for name, g := range p.Generators {
		if err := checkGenerator(name, g); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := p.Drift.Validate(path); err != nil {
		return nil, err
	}
	// What a webhook may reach is the workspace's to allow (its
	// administrators'), not the stack authors'.
	if h := p.Drift.Webhook; h.AllowPrivate || len(h.AllowedHosts) > 0 {
		return nil, fmt.Errorf("%s: drift.webhook: allowPrivate and allowedHosts belong in the workspace, not the project", path)
	}
	return &p, nil
}

func loadStack(dir string) (*Stack, error) {
	path := filepath.Join(dir, StackFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a stack: no %s in it", dir, StackFile)
	}
	var s Stack
	if err := readFile(path, &s); err != nil {
		return nil, err
	}
	s.Dir = dir
	if err := dnsLabel(s.Name); err != nil {
		return nil, fmt.Errorf("%s: name: %w", path, err)
	}
	appPath := filepath.Join(dir, AppFile)
	var apps appFile
	if err := readFile(appPath, &apps); err != nil {
		return nil, err
	}
	if len(apps.Apps) == 0 {
		return nil, fmt.Errorf("%s: apps: no apps declared", appPath)
	}
	for name, app := range apps.Apps {
		if err := dnsLabel(name); err != nil {
			return nil, fmt.Errorf("%s: apps.%s: app name: %w", appPath, name, err)
		}
		if app.Workload == nil {
			return nil, fmt.Errorf("%s: apps.%s: missing workload", appPath, name)
		}
	}
	s.Apps = apps.Apps
	return &s, nil
}

// readFile decodes a YAML file strictly into v; errors name the file and field.
func readFile(path string, v any) error {
	data, err := input.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := input.ParseYAML(data, path)
	if err != nil {
		return err
	}
	if doc == nil {
		return fmt.Errorf("%s: the file is empty", path)
	}
	if err := decode("", doc, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// dnsLabel checks a name that becomes part of Kubernetes names and labels.
func dnsLabel(name string) error {
	if name == "" {
		return errors.New("missing")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid name: %s", name, errs[0])
	}
	return nil
}

var generatorNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

func checkGenerator(name string, g engine.GeneratorDecl) error {
	where := "generators." + name
	switch {
	case !generatorNameRE.MatchString(name):
		return fmt.Errorf("%s: generator names are lowercase letters, digits, '-' and '_', starting with a letter", where)
	case isBuiltin(name):
		return fmt.Errorf("%s: %q is a built-in module and cannot be replaced", where, name)
	case len(g.Command) == 0 || g.Command[0] == "":
		return fmt.Errorf("%s.command: missing: give the executable and its arguments, e.g. [./generators/%s]", where, name)
	}
	return nil
}
