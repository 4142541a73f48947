package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// envGeneratorStack writes a project with a stack whose accessory runs the
// shell generator gen.sh, which writes its environment to envFile; it returns
// the stack and the generator.
func envGeneratorStack(t *testing.T, root, project, envFile string) (stack, gen string) {
	t.Helper()
	dir := filepath.Join(root, project)
	stack = filepath.Join(dir, "dev")
	gen = filepath.Join(dir, "gen.sh")
	for path, content := range map[string]string{
		"project.yaml":   "name: " + project + "\ngenerators:\n  gen: {command: [./gen.sh]}\n",
		"dev/stack.yaml": "name: dev\n",
		"dev/app.yaml":   "apps:\n  web:\n    workload: {type: service, containers: {web: {image: nginx}}}\n    accessories:\n      cache: {module: gen}\n",
		"gen.sh":         "#!/bin/sh\ncat > /dev/null\nenv > " + envFile + "\necho '{\"resources\": []}'\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return stack, gen
}

var trustCommand = regexp.MustCompile(`kumo workspace trust-generator (\S+) (\S+) --sha256 ([0-9a-f]{64})`)

// TestGeneratorTrust: with a shared backend (no trust on first use), a
// generator the workspace does not trust is refused, before it runs, with the
// command that trusts it; after that command it runs, and does not see the
// worker's AWS_SECRET_ACCESS_KEY.
func TestGeneratorTrust(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flags = append(e.flags, "--backend", "file://"+t.TempDir())
	e.environ = append(e.environ, "AWS_SECRET_ACCESS_KEY=worker-secret-key")
	envFile := filepath.Join(t.TempDir(), "env")
	stack, _ := envGeneratorStack(t, t.TempDir(), e.project, envFile)

	r := e.fails([]string{"generate", "--stack", stack}, "generator gen (app web, accessory cache): ", "is not trusted in workspace default")
	m := trustCommand.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("the refusal gives no trust command: %s", r)
	}
	if _, err := os.Stat(envFile); !os.IsNotExist(err) {
		t.Fatalf("the untrusted generator ran: %v", err)
	}
	if strings.Contains(r.stderr, "trusted generator") {
		t.Errorf("a shared backend trusted a generator on first use: %s", r)
	}
	e.ok(strings.Fields(m[0])[1:]...)
	e.ok("generate", "--stack", stack)
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the trusted generator did not run: %v", err)
	}
	if strings.Contains(string(env), "AWS_SECRET_ACCESS_KEY") || strings.Contains(string(env), "worker-secret-key") {
		t.Errorf("the generator saw the worker's AWS secret:\n%s", env)
	}
	if !strings.Contains(string(env), "PATH=") {
		t.Errorf("the generator has no PATH:\n%s", env)
	}
}

// TestGeneratorTrustOnFirstUse: the local owner's one-shot command trusts a
// new generator as it is, and says so; changed, it is refused with the
// command that trusts the new one.
func TestGeneratorTrustOnFirstUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	envFile := filepath.Join(t.TempDir(), "env")
	stack, gen := envGeneratorStack(t, t.TempDir(), e.project, envFile)
	r := e.ok("generate", "--stack", stack)
	if !strings.Contains(r.stderr, "kumo: trusted generator gen (") || !strings.Contains(r.stderr, "in workspace default on first use") {
		t.Errorf("no notice of the trust: %s", r)
	}
	if !strings.Contains(e.ok("workspace", "show", "default").stdout, "gen: ") {
		t.Error("the workspace does not record the trusted digest")
	}
	if r := e.ok("generate", "--stack", stack); strings.Contains(r.stderr, "trusted generator") {
		t.Errorf("trusted again: %s", r)
	}
	if err := os.WriteFile(gen, []byte("#!/bin/sh\ntouch "+envFile+".changed\necho '{\"resources\": []}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.fails([]string{"generate", "--stack", stack}, "changed since workspace default trusted it", "kumo workspace trust-generator default gen --sha256 ")
	if _, err := os.Stat(envFile + ".changed"); !os.IsNotExist(err) {
		t.Fatal("the changed generator ran")
	}
}

// TestServerStackRoots: kumo server reads stacks only under its --stack-root,
// symlinks resolved: a stack elsewhere, or a link under the root leading
// elsewhere, is refused naming the setting.
func TestServerStackRoots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root, elsewhere := t.TempDir(), t.TempDir()
	envFile := filepath.Join(t.TempDir(), "env")
	inside, _ := envGeneratorStack(t, root, e.project, envFile)
	outside, _ := envGeneratorStack(t, elsewhere, e.project, envFile)
	link := filepath.Join(root, "linked")
	if err := os.Symlink(filepath.Dir(outside), link); err != nil {
		t.Fatal(err)
	}
	e.startServer("--headless", "--stack-root", root)
	e.ok("generate", "--stack", inside)
	for _, stack := range []string{outside, filepath.Join(link, "dev")} {
		e.fails([]string{"generate", "--stack", stack}, "is not under a stack root this worker allows (--stack-root: "+root)
	}
}
