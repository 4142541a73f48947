// Package terraformtest gives tests a real terraform binary and providers served
// offline from a filesystem mirror, all built from the Go module proxy by
// hack/build-tools.sh (run when something is missing, like localcluster does for
// Kubernetes) and cached under $HOME/.cache/kumo. Tests that use it are skipped
// with -short.
//
//	tools := terraformtest.Ensure(t)
//	cmd.Env = append(os.Environ(), tools.Env(t.TempDir())...)
//
// KUMO_TEST_TERRAFORM, when set, names another terraform-compatible binary for the
// tests to use instead of terraform v1.5.7, e.g. the tofu that `hack/build-tools.sh
// tofu` builds (~/.cache/kumo/bin/tofu-v1.12.6): the tests pass with both.
package terraformtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// Versions hack/build-tools.sh builds (a test keeps them in sync).
const (
	TerraformVersion        = "v1.5.7"
	ProviderLocalVersion    = "v1.4.0"
	ProviderKumotestVersion = "0.1.0"
)

// Provider sources with versions, as a Terraform resource's extensions.provider
// names them.
const (
	LocalProvider    = "registry.terraform.io/hashicorp/local/1.4.0"
	KumotestProvider = "registry.terraform.io/kumoproj/kumotest/" + ProviderKumotestVersion
	BuiltinProvider  = "terraform.io/builtin/terraform"
)

// AllowedProviders are the provider source patterns that allow both test
// providers: a workspace's runtimes.terraform.allowedProviders, the
// terraform runtime's Config.AllowedProviders. The test provider is not
// HashiCorp's, so the default would refuse it.
var AllowedProviders = []string{"registry.terraform.io/hashicorp/*", "registry.terraform.io/kumoproj/kumotest"}

// Tools are the built programs and the configuration that installs providers
// from the mirror.
type Tools struct {
	// Binary is the terraform binary.
	Binary string
	// PathDir holds only "terraform" (a link to Binary): put it first on PATH for
	// kumo's default binary lookup.
	PathDir string
	// Mirror is the provider filesystem mirror (a plugin directory).
	Mirror string
	// CLIConfig is a CLI configuration (TF_CLI_CONFIG_FILE) that installs
	// providers from Mirror only.
	CLIConfig string
}

// Ensure returns the tools, building what is missing (minutes the first time);
// it skips the test with -short.
func Ensure(t testing.TB) Tools {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a terraform binary and providers; skipped with -short")
	}
	tools, err := ensure()
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// Env returns the environment entries a kumo process (or this one, see Setenv)
// needs to run terraform from tools: PATH with tools.PathDir first,
// TF_CLI_CONFIG_FILE (this machine's own may point at a missing file), and
// KUMO_TERRAFORM_DIR = workDir for the working directories and plugin cache.
func (tl Tools) Env(workDir string) []string {
	return []string{
		"PATH=" + tl.PathDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TF_CLI_CONFIG_FILE=" + tl.CLIConfig,
		"KUMO_TERRAFORM_DIR=" + workDir,
	}
}

// Setenv sets Env(workDir) in this process for the length of the test.
func (tl Tools) Setenv(t testing.TB, workDir string) {
	for _, kv := range tl.Env(workDir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Objects lists the kumotest_object objects in dir: its files other than the
// .pending markers of creates and updates in flight.
func Objects(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".pending") {
			names = append(names, e.Name())
		}
	}
	return names
}

func ensure() (Tools, error) {
	binDir := localcluster.DefaultBinDir()
	cache := filepath.Dir(binDir)
	tools := Tools{
		Binary:    filepath.Join(binDir, "terraform-"+TerraformVersion),
		PathDir:   filepath.Join(cache, "terraform-path"),
		Mirror:    filepath.Join(cache, "terraform-mirror"),
		CLIConfig: filepath.Join(cache, "terraform.tfrc"),
	}
	kumotest, err := kumotestTag()
	if err != nil {
		return tools, err
	}
	osArch := runtime.GOOS + "_" + runtime.GOARCH
	missing := func() []string {
		var m []string
		if !isFile(tools.Binary) {
			m = append(m, "terraform")
		}
		ready := isFile(tools.CLIConfig) &&
			isFile(filepath.Join(binDir, "terraform-provider-kumotest-"+kumotest)) &&
			sameFile(filepath.Join(tools.Mirror, "registry.terraform.io/kumoproj/kumotest", ProviderKumotestVersion, osArch, "terraform-provider-kumotest_v"+ProviderKumotestVersion),
				filepath.Join(binDir, "terraform-provider-kumotest-"+kumotest)) &&
			sameFile(filepath.Join(tools.Mirror, "registry.terraform.io/hashicorp/local", ProviderLocalVersion[1:], osArch, "terraform-provider-local_"+ProviderLocalVersion),
				filepath.Join(binDir, "terraform-provider-local-"+ProviderLocalVersion))
		if !ready {
			m = append(m, "terraform-mirror")
		}
		return m
	}
	if len(missing()) > 0 {
		if err := localcluster.BuildTools(binDir, missing); err != nil {
			return tools, err
		}
	}
	if b := os.Getenv("KUMO_TEST_TERRAFORM"); b != "" {
		tools.Binary = b
	}
	// One directory per binary, so test runs with different binaries can overlap.
	tools.PathDir = filepath.Join(tools.PathDir, filepath.Base(tools.Binary))
	return tools, linkPath(tools)
}

// linkPath makes PathDir/terraform point at the binary.
func linkPath(tools Tools) error {
	if err := os.MkdirAll(tools.PathDir, 0o755); err != nil {
		return err
	}
	link := filepath.Join(tools.PathDir, "terraform")
	if target, err := os.Readlink(link); err == nil && target == tools.Binary {
		return nil
	}
	tmp := link + ".tmp" + rand.Text()
	if err := os.Symlink(tools.Binary, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// kumotestTag is the test provider's cache tag as hack/build-tools.sh computes
// it: its version and a hash of go.mod, go.sum and its Go files in name order.
func kumotestTag() (string, error) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "hack", "tools", "terraform-provider-kumotest")
	goFiles, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	slices.Sort(goFiles)
	h := sha256.New()
	for _, f := range append([]string{filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.sum")}, goFiles...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return ProviderKumotestVersion + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// MirrorAt builds a filesystem mirror of the tools' providers in dir (linked,
// else copied, from the shared mirror) and a CLI configuration that installs
// from it only, and returns that configuration's path. Tests use it for a mirror
// that can move or disappear, as a user's may.
func (tl Tools) MirrorAt(t testing.TB, dir string) string {
	t.Helper()
	mirror := filepath.Join(dir, "mirror")
	err := filepath.WalkDir(tl.Mirror, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(tl.Mirror, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(mirror, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if os.Link(path, dst) == nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "terraform.tfrc")
	text := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}
