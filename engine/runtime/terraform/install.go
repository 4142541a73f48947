package terraform

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/kumoproj/kumo/engine"
)

// binary finds the configured binary: a path as it is, a name on PATH.
func (r *Runtime) binary() (string, error) {
	b := r.cfg.Binary
	if strings.ContainsRune(b, '/') || strings.ContainsRune(b, filepath.Separator) {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("terraform binary: %w", err)
		}
		return b, nil
	}
	p, err := exec.LookPath(b)
	if err != nil {
		return "", fmt.Errorf("terraform binary %q not found on PATH (runtimes.terraform.binary names terraform, tofu or a path)", b)
	}
	return p, nil
}

// handle returns the terraform-exec handle of dir and bin, made once.
func (r *Runtime) handle(dir, bin string) (*tfexec.Terraform, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := tfKey{dir, bin}
	if tf, ok := r.tfs[k]; ok {
		return tf, nil
	}
	tf, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		return nil, err
	}
	if err := tf.SetEnv(r.env()); err != nil {
		return nil, err
	}
	r.tfs[k] = tf
	return tf, nil
}

// env is the worker's environment (so the user's CLI configuration applies) with
// the shared plugin cache. Generated working directories have no lock file worth
// protecting, so the cache may be used without one: otherwise terraform would
// install the provider again for every new directory.
func (r *Runtime) env() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env["TF_PLUGIN_CACHE_DIR"] = r.cache
	env["TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE"] = "true"
	if _, set := env["CHECKPOINT_DISABLE"]; !set {
		env["CHECKPOINT_DISABLE"] = "1" // no version check calls home from a worker
	}
	return tfexec.CleanEnv(env)
}

// lockCache serializes inits that may add a provider to the shared plugin cache
// (terraform does not guard the cache against concurrent writers); inits of a
// provider already there only read it and run side by side.
func (r *Runtime) lockCache(ctx context.Context, p engine.TerraformProvider) (func(), error) {
	cached := false
	if p.Builtin() {
		cached = true
	} else if exactVersion.MatchString(p.Version) {
		_, err := os.Stat(filepath.Join(r.cache, p.Host, p.Namespace, p.Name, p.Version, goruntime.GOOS+"_"+goruntime.GOARCH))
		cached = err == nil
	}
	return lockFile(ctx, filepath.Join(r.cache, lockName), !cached)
}

var exactVersion = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
