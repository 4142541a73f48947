package localcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"syscall"
)

// Versions of the binaries hack/build-tools.sh builds (a test keeps them in sync).
const (
	EtcdVersion       = "v3.6.8"
	KubernetesVersion = "v1.36.3"
	KwokVersion       = "v0.8.0"
)

// Binaries are the paths of the programs a cluster runs (the last two only with
// Options.Workloads).
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kwok string
}

// DefaultBinDir is where hack/build-tools.sh caches binaries: $HOME/.cache/kumo/bin
// (or $KUMO_TOOLS_BIN, the variable the script itself honours).
func DefaultBinDir() string {
	if d := os.Getenv("KUMO_TOOLS_BIN"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kumo-bin")
	}
	return filepath.Join(home, ".cache", "kumo", "bin")
}

// BinariesIn names the versioned binaries in binDir, built or not.
func BinariesIn(binDir string) Binaries {
	return Binaries{
		Etcd:              filepath.Join(binDir, "etcd-"+EtcdVersion),
		APIServer:         filepath.Join(binDir, "kube-apiserver-"+KubernetesVersion),
		ControllerManager: filepath.Join(binDir, "kube-controller-manager-"+KubernetesVersion),
		Scheduler:         filepath.Join(binDir, "kube-scheduler-"+KubernetesVersion),
		Kwok:              filepath.Join(binDir, "kwok-"+KwokVersion),
	}
}

func (b Binaries) tools() map[string]string {
	return map[string]string{
		"etcd": b.Etcd, "kube-apiserver": b.APIServer, "kube-controller-manager": b.ControllerManager,
		"kube-scheduler": b.Scheduler, "kwok": b.Kwok,
	}
}

// EnsureBinaries returns the binaries in binDir ("" = DefaultBinDir), building the
// missing ones with hack/build-tools.sh (output to stderr; a cold build takes many
// minutes). Concurrent callers, in this or other processes, build only once.
func EnsureBinaries(binDir string) (Binaries, error) {
	if binDir == "" {
		binDir = DefaultBinDir()
	}
	bins := BinariesIn(binDir)
	return bins, EnsureTools(binDir, bins.tools())
}

// EnsureTools makes sure each binary in paths (tool name, as hack/build-tools.sh
// knows it, to its path in binDir) exists, building the missing ones with the
// script. Concurrent callers, in this or other processes, build only once.
func EnsureTools(binDir string, paths map[string]string) error {
	missing := func() []string {
		var tools []string
		for name, path := range paths {
			if st, err := os.Stat(path); err != nil || st.IsDir() {
				tools = append(tools, name)
			}
		}
		sort.Strings(tools)
		return tools
	}
	return BuildTools(binDir, missing)
}

// BuildTools runs hack/build-tools.sh for the tools missing() names, if any,
// holding a lock on binDir so that concurrent callers, in this or other
// processes, build only once: missing is asked again once the lock is held, and
// after the script ran. For tools whose readiness is more than one file
// (internal/terraformtest's provider mirror).
func BuildTools(binDir string, missing func() []string) error {
	if len(missing()) == 0 {
		return nil
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(binDir, ".build.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	todo := missing() // another process may have built them while we waited
	if len(todo) == 0 {
		return nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return fmt.Errorf("binaries %v missing in %s and %w", todo, binDir, err)
	}
	script := filepath.Join(root, "hack", "build-tools.sh")
	fmt.Fprintf(os.Stderr, "building %v with %s (first time only)\n", todo, script)
	cmd := exec.Command(script, todo...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "KUMO_TOOLS_BIN="+binDir)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w", script, todo, err)
	}
	if m := missing(); len(m) > 0 {
		return fmt.Errorf("%s ran but %v are still missing in %s", script, m, binDir)
	}
	return nil
}

func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

const modulePath = "github.com/kumoproj/kumo"

// ModuleRoot finds the kumo module's root directory: from this source file's
// location when the sources are where they were compiled, else by walking up from
// the working directory to kumo's go.mod.
func ModuleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "..")
		if isKumoRoot(dir) {
			return filepath.Clean(dir), nil
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isKumoRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("kumo module root (go.mod of %s) not found above the working directory", modulePath)
		}
		dir = parent
	}
}

func isKumoRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 2 && string(f[0]) == "module" {
			return string(f[1]) == modulePath
		}
	}
	return false
}
