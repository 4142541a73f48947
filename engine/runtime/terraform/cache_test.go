package terraform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kumoproj/kumo/engine/runtime/terraform"
	"github.com/kumoproj/kumo/internal/terraformtest"
)

// The working directories are a cache shared by every kumo home of a user; these
// tests take away what a cached directory was initialised from and check the
// next run initialises it again instead of failing with "Required plugins are
// not installed".

// TestCacheOutlivesItsMirror: apply with a CLI configuration naming a mirror in
// a temporary directory, delete that directory, make a new mirror elsewhere and
// apply again from a new home (nothing recorded, same cache).
func TestCacheOutlivesItsMirror(t *testing.T) {
	tools := terraformtest.Ensure(t)
	cache, files := t.TempDir(), t.TempDir()
	res := localFile("motd", filepath.Join(files, "motd"), "hello")

	first := t.TempDir()
	t.Setenv("TF_CLI_CONFIG_FILE", tools.MirrorAt(t, first))
	apply(t, newRuntimeAt(t, tools, cache), res)
	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}

	t.Setenv("TF_CLI_CONFIG_FILE", tools.MirrorAt(t, t.TempDir()))
	out := apply(t, newRuntimeAt(t, tools, cache), res)
	preview(t, newRuntimeAt(t, tools, cache), recorded(res, out))
}

// TestCacheOutlivesItsPluginCache: the same CLI configuration, but the shared
// plugin cache the working directory links its provider from was cleaned.
func TestCacheOutlivesItsPluginCache(t *testing.T) {
	tools := terraformtest.Ensure(t)
	t.Setenv("TF_CLI_CONFIG_FILE", tools.CLIConfig)
	cache := t.TempDir()
	res := localFile("motd", filepath.Join(t.TempDir(), "motd"), "hello")
	out := apply(t, newRuntimeAt(t, tools, cache), res)
	if err := os.RemoveAll(filepath.Join(cache, "plugins")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	apply(t, newRuntimeAt(t, tools, cache), recorded(res, out))
}

func newRuntimeAt(t *testing.T, tools terraformtest.Tools, dir string) *terraform.Runtime {
	t.Helper()
	rt, err := terraform.New(terraform.Config{Binary: tools.Binary, AllowedProviders: terraformtest.AllowedProviders, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
