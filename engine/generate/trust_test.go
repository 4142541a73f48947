package generate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// trustEverything trusts every executable: for tests not about trust.
var trustEverything = Trust{Dirs: []string{"/"}}

// envProject writes a project whose generator "gen" records its environment
// in envFile and answers with no resources; it returns the stack dir and the
// generator's path.
func envProject(t *testing.T, envFile string) (stack, gen string) {
	t.Helper()
	stack = writeProject(t, "name: shop\ngenerators:\n  gen: {command: [./gen.sh]}\n", cacheApp)
	gen = filepath.Join(filepath.Dir(stack), "gen.sh")
	write(t, gen, "#!/bin/sh\ncat > /dev/null\nenv > "+envFile+"\necho '{\"resources\": []}'\n")
	return stack, gen
}

func generateWith(t *testing.T, stack string, trust Trust) error {
	t.Helper()
	src, err := Load(stack)
	if err != nil {
		t.Fatal(err)
	}
	ws := &engine.Workspace{Name: trust.Workspace}
	_, err = Generate(context.Background(), Input{Source: src, Workspace: ws, Runner: ExecRunner{Trust: trust}})
	return err
}

// TestUntrustedGeneratorRefused: a generator the workspace does not trust
// never runs; the error names it, its digest and the command that trusts it.
// Trusted by that digest it runs; changed afterwards it is refused again.
func TestUntrustedGeneratorRefused(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	stack, gen := envProject(t, envFile)
	sum, err := FileSHA256(gen)
	if err != nil {
		t.Fatal(err)
	}
	err = generateWith(t, stack, Trust{Workspace: "dev"})
	var untrusted *UntrustedError
	if !errors.As(err, &untrusted) {
		t.Fatalf("error %v, want an UntrustedError", err)
	}
	for _, want := range []string{"generator gen (app web, accessory cache): ", "is not trusted in workspace dev",
		"kumo workspace trust-generator dev gen --sha256 " + sum} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(envFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the untrusted generator ran: %v", err)
	}

	trusted := Trust{Workspace: "dev", Config: engine.GeneratorTrust{SHA256: map[string]string{"gen": sum}}}
	if err := generateWith(t, stack, trusted); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(envFile); err != nil {
		t.Fatalf("the trusted generator did not run: %v", err)
	}

	write(t, gen, "#!/bin/sh\ntouch "+envFile+".changed\necho '{\"resources\": []}'\n")
	err = generateWith(t, stack, trusted)
	if err == nil || !strings.Contains(err.Error(), "changed since workspace dev trusted it (sha256 "+sum+")") {
		t.Fatalf("changed generator: %v", err)
	}
	if _, err := os.Stat(envFile + ".changed"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the changed generator ran")
	}
}

// TestTrustedGeneratorEnvironment: a trusted generator sees the fixed
// variables and those the workspace names, never the worker's credentials.
func TestTrustedGeneratorEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "worker-secret")
	t.Setenv("TEMPORAL_API_KEY", "worker-temporal-key")
	t.Setenv("KUMO_GEN_REGION", "eu-1")
	envFile := filepath.Join(t.TempDir(), "env")
	stack, gen := envProject(t, envFile)
	sum, err := FileSHA256(gen)
	if err != nil {
		t.Fatal(err)
	}
	trust := Trust{Workspace: "dev", Config: engine.GeneratorTrust{SHA256: map[string]string{"gen": sum}, Env: []string{"KUMO_GEN_REGION"}}}
	if err := generateWith(t, stack, trust); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"AWS_SECRET_ACCESS_KEY", "worker-secret", "TEMPORAL_API_KEY"} {
		if strings.Contains(string(env), absent) {
			t.Errorf("the generator saw %s:\n%s", absent, env)
		}
	}
	for _, present := range []string{"KUMO_GEN_REGION=eu-1", "PATH=" + os.Getenv("PATH")} {
		if !strings.Contains(string(env), present+"\n") {
			t.Errorf("the generator lacks %s:\n%s", present, env)
		}
	}
}

// TestTrustedDirectory: an executable under a directory the workspace or the
// operator trusts runs with no digest; a link to it from elsewhere is judged
// by where it leads.
func TestTrustedDirectory(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	stack, gen := envProject(t, envFile)
	dir := t.TempDir()
	moved := filepath.Join(dir, "gen.sh")
	if err := os.Rename(gen, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, gen); err != nil {
		t.Fatal(err)
	}
	if err := generateWith(t, stack, Trust{Workspace: "dev", Dirs: []string{dir}}); err != nil {
		t.Fatalf("operator's directory: %v", err)
	}
	if err := generateWith(t, stack, Trust{Workspace: "dev", Config: engine.GeneratorTrust{Dirs: []string{dir}}}); err != nil {
		t.Fatalf("workspace's directory: %v", err)
	}
	// The stack's own directory is not trusted because the link is there.
	if err := generateWith(t, stack, Trust{Workspace: "dev", Dirs: []string{filepath.Dir(stack)}}); err == nil {
		t.Fatal("a link in a trusted directory to a file outside it was trusted")
	}
}

// TestStackRoots: a stack directory must lie under a root, symlinks resolved;
// its project directory too. No root reads nothing.
func TestStackRoots(t *testing.T) {
	stack := writeProject(t, "name: shop\n", cacheApp)
	project := filepath.Dir(stack)
	if _, err := (Policy{StackRoots: []string{project}}).Load(stack); err != nil {
		t.Fatalf("stack under its root: %v", err)
	}
	other := t.TempDir()
	_, err := (Policy{StackRoots: []string{other}}).Load(stack)
	if err == nil || !strings.Contains(err.Error(), "is not under a stack root this worker allows (--stack-root: "+other) {
		t.Fatalf("stack outside the roots: %v", err)
	}
	if _, err := (Policy{}).Load(stack); err == nil || !strings.Contains(err.Error(), "none (this worker reads no stack directory)") {
		t.Fatalf("no roots: %v", err)
	}
	// A link under the root that leads outside it is outside.
	link := filepath.Join(other, "shop-dev")
	if err := os.Symlink(stack, link); err != nil {
		t.Fatal(err)
	}
	if _, err := (Policy{StackRoots: []string{other}}).Load(link); err == nil {
		t.Fatal("a link under the root to a stack outside it was read")
	}
	// A stack under the root whose project.yaml is found above the root.
	if _, err := (Policy{StackRoots: []string{stack}}).Load(stack); err == nil || !strings.Contains(err.Error(), "the project of stack") {
		t.Fatalf("project above the root: %v", err)
	}
	if _, err := (Policy{AnyStackDir: true}).Load(link); err != nil {
		t.Fatalf("any directory: %v", err)
	}
}

func TestCheckTrust(t *testing.T) {
	good := engine.GeneratorTrust{SHA256: map[string]string{"gen": strings.Repeat("ab", 32)}, Dirs: []string{"/opt/gen"}, Env: []string{"HTTPS_PROXY"}}
	if err := CheckTrust(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []engine.GeneratorTrust{
		{SHA256: map[string]string{"gen": "abc"}}, {Dirs: []string{"gen"}}, {Env: []string{"A=B"}},
	} {
		if err := CheckTrust(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
