// Package registry hands out kumo's runtimes: one per resource type and
// settings, built on first use and shared by every node of every run, so that
// clients, discovery caches and connections are too. It is the one place that
// knows every Runtime implementation (engine/runtime/kubernetes,
// engine/runtime/terraform), which is why it is a package of its own beside
// them: engine/runtime, which they implement, cannot import them. A worker's
// activities apply through it, and the client reads a stack's status through
// it; it never imports Temporal.
package registry

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/terraform"
	"github.com/kumoproj/kumo/runspec"
)

// Runtimes builds one Runtime per type and settings and reuses it.
type Runtimes struct {
	mu    sync.Mutex
	cache map[runtimeKey]runtime.Runtime
}

// runtimeKey is comparable: the settings' map of allowed kubeconfigs is kept
// in it as its pairs in key order (see pairs).
type runtimeKey struct {
	typ                engine.Type
	kubeconfig, kctx   string
	kubeconfigs        string
	allowExecPlugins   bool
	terraformBinary    string
	terraformPluginDir string
	terraformProviders string
}

// New returns an empty runtime cache.
func New() *Runtimes { return &Runtimes{cache: map[runtimeKey]runtime.Runtime{}} }

// For implements release.Runtimes.
func (r *Runtimes) For(typ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Each runtime reads only its own settings: sharing one among runs that
	// differ in the others keeps one set of caches (discovery, terraform handles).
	key := runtimeKey{typ: typ}
	switch typ {
	case engine.Kubernetes:
		s = runspec.RuntimeSettings{Kubeconfig: s.Kubeconfig, Context: s.Context, Kubeconfigs: s.Kubeconfigs, AllowExecPlugins: s.AllowExecPlugins}
		key.kubeconfig, key.kctx, key.kubeconfigs, key.allowExecPlugins = s.Kubeconfig, s.Context, pairs(s.Kubeconfigs), s.AllowExecPlugins
	case engine.Terraform:
		s = runspec.RuntimeSettings{TerraformBinary: s.TerraformBinary, TerraformPluginDir: s.TerraformPluginDir, TerraformAllowedProviders: s.TerraformAllowedProviders}
		key.terraformBinary, key.terraformPluginDir = s.TerraformBinary, s.TerraformPluginDir
		key.terraformProviders = quoted(s.TerraformAllowedProviders)
	}
	if rt, ok := r.cache[key]; ok {
		return rt, nil
	}
	var rt runtime.Runtime
	var err error
	switch typ {
	case engine.Kubernetes:
		rt, err = newKubernetes(s)
	case engine.Terraform:
		// Working directories and the plugin cache are worker-local
		// (terraform.DefaultDir, $KUMO_TERRAFORM_DIR); the state is in the backend.
		rt, err = terraform.New(terraform.Config{Binary: s.TerraformBinary, PluginDir: s.TerraformPluginDir, AllowedProviders: s.TerraformAllowedProviders})
	default:
		return nil, fmt.Errorf("no runtime for resource type %q", typ)
	}
	if err != nil {
		return nil, err
	}
	r.cache[key] = rt
	return rt, nil
}

// pairs writes m's keys and values in key order, each quoted so that no two
// maps give one string (a name or path may hold any byte).
func pairs(m map[string]string) string {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = strconv.AppendQuote(strconv.AppendQuote(b, k), m[k])
	}
	return string(b)
}

// quoted writes l's values in order, each quoted; nil and empty differ, as
// they do for the terraform runtime (nil: its default).
func quoted(l []string) string {
	if l == nil {
		return "nil"
	}
	b := []byte("list")
	for _, v := range l {
		b = strconv.AppendQuote(b, v)
	}
	return string(b)
}
