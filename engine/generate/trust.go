package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/kumoproj/kumo/engine"
)

// BaseEnv is the environment every external generator gets from the worker's,
// whatever the workspace says: what a program needs to find others and
// format text. Everything else (cloud and Temporal credentials, KUMO_*) stays
// with the worker unless the workspace names it (GeneratorTrust.Env).
var BaseEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// Policy is what a worker's operator decides about generation, for every
// workspace: where stacks may be read from and which directories' executables
// are trusted.
type Policy struct {
	// StackRoots are the directories a stack directory must lie under,
	// symlinks resolved on both sides. None: no stack is read, unless
	// AnyStackDir.
	StackRoots []string
	// AnyStackDir reads a stack from any directory: for a one-shot command,
	// whose worker runs in the process of the user who named the stack.
	AnyStackDir bool
	// TrustedDirs are directories whose executables every workspace trusts
	// (the kumo home's generators directory).
	TrustedDirs []string
	// SourceCache is the directory git sources are fetched into, one
	// directory per repository and commit (none: git sources are refused).
	SourceCache string
}

// StackDir resolves dir's symlinks and checks that it lies under one of the
// policy's StackRoots; it returns the resolved directory, which is the one to
// read, so that a link swapped after the check changes nothing.
func (p Policy) StackDir(dir string) (string, error) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("stack %s: %w", dir, err)
	}
	if p.AnyStackDir {
		return resolved, nil
	}
	for _, root := range p.StackRoots {
		if within(resolved, root) {
			return resolved, nil
		}
	}
	roots := "none (this worker reads no stack directory)"
	if len(p.StackRoots) > 0 {
		roots = strings.Join(p.StackRoots, ", ")
	}
	return "", fmt.Errorf("stack %s (%s) is not under a stack root this worker allows (--stack-root: %s)", dir, resolved, roots)
}

// Load is generate.Load of a stack directory the policy allows: the
// directory, symlinks resolved, and the project directory found above it
// must both lie under a stack root.
func (p Policy) Load(dir string) (*Source, error) {
	resolved, err := p.StackDir(dir)
	if err != nil {
		return nil, err
	}
	src, err := Load(resolved)
	if err != nil {
		return nil, err
	}
	if _, err := p.StackDir(src.Project.Dir); err != nil {
		return nil, fmt.Errorf("the project of stack %s: %w", dir, err)
	}
	return src, nil
}

// within reports whether path (resolved) is root or lies under it, root's
// symlinks resolved too.
func within(path, root string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(r, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Trust decides which external generators may run: those a workspace trusts
// by name and sha256, and those under a directory the workspace or the
// worker's operator trusts.
type Trust struct {
	// Workspace names the workspace, for the command that trusts a generator.
	Workspace string
	Config    engine.GeneratorTrust
	// Dirs are the operator's trusted directories (Policy.TrustedDirs).
	Dirs []string
}

// UntrustedError is a generator the workspace does not trust. Its message
// gives the command that trusts it.
type UntrustedError struct {
	Generator, Workspace string
	// Path is the executable (symlinks resolved), SHA256 its digest, and
	// Trusted the digest the workspace trusts for the name ("" if none).
	Path, SHA256, Trusted string
}

// Command is the command an administrator of the workspace runs to trust
// the generator as it is now.
func (e *UntrustedError) Command() string {
	return fmt.Sprintf("kumo workspace trust-generator %s %s --sha256 %s", e.Workspace, e.Generator, e.SHA256)
}

func (e *UntrustedError) Error() string {
	why := "is not trusted in workspace " + e.Workspace
	if e.Trusted != "" {
		why = fmt.Sprintf("changed since workspace %s trusted it (sha256 %s)", e.Workspace, e.Trusted)
	}
	return fmt.Sprintf("%s (sha256 %s) %s; to run it, an administrator of the workspace checks it and runs: %s",
		e.Path, e.SHA256, why, e.Command())
}

// Executable resolves the program call runs to an absolute path, symlinks
// resolved: a relative path (./gen) is relative to call.Dir, a bare name is
// looked up on PATH.
func Executable(call Call) (string, error) {
	if len(call.Command) == 0 || call.Command[0] == "" {
		return "", errors.New("has no command")
	}
	name := call.Command[0]
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(call.Dir, name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("could not run %s: %w", strings.Join(call.Command, " "), err)
	}
	if path, err = filepath.Abs(path); err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return "", fmt.Errorf("could not run %s: %w", strings.Join(call.Command, " "), err)
	}
	return path, nil
}

// FileSHA256 is the hex sha256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Check resolves call's executable and returns it when trusted, else an
// *UntrustedError.
func (t Trust) Check(call Call) (string, error) {
	f, path, err := t.Open(call)
	if err != nil {
		return "", err
	}
	f.Close()
	return path, nil
}

// Open resolves call's executable and, when trusted, returns it open with
// its path: the digest is taken from the open file, so running that file
// (see ExecRunner) runs what was checked even if the path changes meanwhile.
// Otherwise it returns an *UntrustedError.
func (t Trust) Open(call Call) (*os.File, string, error) {
	path, err := Executable(call)
	if err != nil {
		return nil, "", err
	}
	// The path has no symlink left: a link put in its place is not followed.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, "", fmt.Errorf("could not run %s: %w", strings.Join(call.Command, " "), err)
	}
	for _, dir := range slices.Concat(t.Config.Dirs, t.Dirs) {
		if within(path, dir) {
			return f, path, nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	trusted := t.Config.SHA256[call.Generator]
	if trusted != "" && strings.EqualFold(trusted, sum) {
		return f, path, nil
	}
	f.Close()
	return nil, "", &UntrustedError{Generator: call.Generator, Workspace: t.Workspace, Path: path, SHA256: sum, Trusted: trusted}
}

// Env is the environment a generator runs with: BaseEnv and the variables
// the workspace names, as the worker has them; nothing else.
func (t Trust) Env() []string {
	var env []string
	for _, name := range slices.Concat(BaseEnv, t.Config.Env) {
		if v, ok := os.LookupEnv(name); ok && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// CheckTrust reports a workspace's generator trust that cannot be used: a
// digest that is not a sha256, a directory or variable name that is not one.
func CheckTrust(t engine.GeneratorTrust) error {
	for name, sum := range t.SHA256 {
		if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("generatorTrust.sha256.%s: %q is not a sha256 in hex (64 characters)", name, sum)
		}
	}
	for i, d := range t.Dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("generatorTrust.dirs[%d]: %q is not an absolute directory", i, d)
		}
	}
	for i, v := range t.Env {
		if v == "" || strings.ContainsAny(v, "= \t\n") {
			return fmt.Errorf("generatorTrust.env[%d]: %q is not an environment variable name", i, v)
		}
	}
	return nil
}

// ExternalCalls lists, in module name order, one call per external
// generator a stack's apps use, as Generate would make it (the project's
// declaration first, then the workspace's; in the project directory), with
// no request: enough to find and check the executables before a run.
func ExternalCalls(src *Source, ws *engine.Workspace) []Call {
	if ws == nil {
		ws = &engine.Workspace{}
	}
	g := &generation{in: Input{Source: src}, ws: ws}
	seen := map[string]bool{}
	var calls []Call
	for _, appName := range sortedKeys(src.Stack.Apps) {
		for _, accName := range sortedKeys(src.Stack.Apps[appName].Accessories) {
			module, _ := src.Stack.Apps[appName].Accessories[accName]["module"].(string)
			if module == "" || accessories[module] != nil || seen[module] {
				continue
			}
			if decl, dir, ok := g.generator(module); ok {
				seen[module] = true
				calls = append(calls, Call{Generator: module, Command: decl.Command, Dir: dir})
			}
		}
	}
	slices.SortFunc(calls, func(a, b Call) int { return strings.Compare(a.Generator, b.Generator) })
	return calls
}
