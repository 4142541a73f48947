package terraform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Config says which binary runs and where providers and working directories live.
type Config struct {
	// Binary is "terraform" or "tofu" (looked up on PATH), or a path. Default
	// "terraform".
	Binary string
	// PluginDir, when set, is the only place providers are installed from (a
	// filesystem mirror, `terraform init -plugin-dir`), for offline use. Empty: the
	// user's CLI configuration decides.
	PluginDir string
	// AllowedProviders are the provider source patterns resources may use
	// (engine.ProviderAllowed); nil: engine.DefaultAllowedProviders. Any
	// other provider is refused before terraform init, so it is never
	// downloaded or run.
	AllowedProviders []string
	// Dir holds the working directories and the shared provider plugin cache.
	// Default: DefaultDir().
	Dir string
}

// DefaultDir is $KUMO_TERRAFORM_DIR, else kumo/terraform in the user's cache
// directory (~/.cache/kumo/terraform): working directories are a cache, since
// terraform state is kept in kumo's backend.
func DefaultDir() string {
	if d := os.Getenv("KUMO_TERRAFORM_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kumo", "terraform")
	}
	return filepath.Join(os.TempDir(), "kumo-terraform")
}

// Runtime implements runtime.Runtime and runtime.Previewer for Terraform
// resources. It is safe for concurrent use.
type Runtime struct {
	cfg         Config
	work, cache string

	mu sync.Mutex
	// tfs keeps one terraform-exec handle per working directory and binary: the
	// handle remembers the binary's version, which it would otherwise ask for
	// (one more process) before every init and show.
	tfs map[tfKey]*tfexec.Terraform
	// sensitive caches, per provider version and resource type, the
	// attributes its schema marks sensitive.
	sensitive map[sensitiveKey][]string
}

type tfKey struct{ dir, bin string }

var (
	_ runtime.Runtime   = (*Runtime)(nil)
	_ runtime.Previewer = (*Runtime)(nil)
)

// New returns a runtime for cfg. It does not look for the binary yet: a missing
// binary is reported by each operation, naming its resource.
func New(cfg Config) (*Runtime, error) {
	if cfg.Binary == "" {
		cfg.Binary = "terraform"
	}
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir()
	}
	if cfg.AllowedProviders == nil {
		cfg.AllowedProviders = engine.DefaultAllowedProviders
	}
	if err := engine.CheckProviderPatterns(cfg.AllowedProviders); err != nil {
		return nil, fmt.Errorf("terraform runtime: %w", err)
	}
	r := &Runtime{cfg: cfg, work: filepath.Join(cfg.Dir, "work"), cache: filepath.Join(cfg.Dir, "plugins"), tfs: map[tfKey]*tfexec.Terraform{}, sensitive: map[sensitiveKey][]string{}}
	for _, d := range []string{r.work, r.cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("terraform runtime: %w", err)
		}
	}
	return r, nil
}

// Apply makes the resource exist as its attributes say, adopting the object named
// by its import ID if it has one and no recorded state. The result records the
// new terraform state. When the apply fails after terraform changed the state (a
// tainted object, an interrupted apply), the resource as that state has it is
// returned with the error, so it can be recorded; a failure that left no object
// returns nil.
func (r *Runtime) Apply(ctx context.Context, desired *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	if err := runtime.Interrupted(ctx, "apply", desired.ID); err != nil {
		return nil, err
	}
	if opts.DryRun {
		_, planned, err := r.Preview(ctx, desired)
		return planned, err
	}
	if err := arguments("apply", desired); err != nil {
		return nil, err
	}
	s, err := r.open(ctx, "apply", desired)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.adopt(ctx); err != nil {
		return nil, err
	}
	if err := s.configure(ctx, true); err != nil {
		return nil, err
	}
	if err := s.run(ctx, "apply", func(ctx context.Context) error { return s.tf.Apply(ctx) }); err != nil {
		// Whatever the failed apply left is worth recording, also when it was
		// interrupted: read it without the cancelled context.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if live, readErr := s.result(readCtx, false); readErr == nil {
			return live, err
		}
		return nil, err
	}
	live, err := s.result(ctx, true)
	if err != nil {
		return nil, err
	}
	if live == nil {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: terraform apply succeeded but its state holds no %s", desired.ID, s.address()))
	}
	return live, nil
}

// Preview plans desired against its recorded state: live is the resource as the
// plan's refresh found it (nil when absent), planned what an apply would make of
// it, with engine.KnownAfterApply for values known only after the apply.
func (r *Runtime) Preview(ctx context.Context, desired *engine.Resource) (live, planned *engine.Resource, err error) {
	if err := runtime.Interrupted(ctx, "preview", desired.ID); err != nil {
		return nil, nil, err
	}
	if err := arguments("preview", desired); err != nil {
		return nil, nil, err
	}
	s, err := r.open(ctx, "preview", desired)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	if err := s.adopt(ctx); err != nil {
		return nil, nil, err
	}
	if err := s.configure(ctx, true); err != nil {
		return nil, nil, err
	}
	return s.plan(ctx)
}

// Read refreshes the recorded object and returns it as it is live; when it is
// gone or was never created the error wraps runtime.ErrNotFound. A resource with
// an import ID and no recorded state is read by importing it (which changes
// nothing but the returned state).
func (r *Runtime) Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	live, err := r.read(ctx, res)
	if err == nil && live == nil {
		return nil, runtime.NotFound(res.ID)
	}
	return live, err
}

// read is Read with an absent resource returned as nil.
func (r *Runtime) read(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	if err := runtime.Interrupted(ctx, "read", res.ID); err != nil {
		return nil, err
	}
	spec, err := parse("read", res)
	if err != nil {
		return nil, err
	}
	if !hasInstance(stateOf(res), spec) && spec.ImportID == "" {
		return nil, nil // never created: nothing to start terraform for
	}
	s, err := r.open(ctx, "read", res)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if s.importing() {
		if err := s.adopt(ctx); err != nil {
			return nil, err
		}
		return s.result(ctx, false)
	}
	// The resource block is left out: its arguments may hold references not
	// resolved yet, and refreshing needs only the provider and the state.
	if err := s.configure(ctx, false); err != nil {
		return nil, err
	}
	if err := s.run(ctx, "apply -refresh-only", func(ctx context.Context) error {
		return s.tf.Apply(ctx, tfexec.RefreshOnly(true))
	}); err != nil {
		return nil, err
	}
	return s.result(ctx, false)
}

// arguments refuses a resource whose attributes hold a Terraform meta-argument,
// before anything is written for it: the worker does not trust its caller to
// have validated the spec. Its errors start with op and the ID.
func arguments(op string, res *engine.Resource) error {
	if err := engine.CheckTerraformArguments(res.Attributes); err != nil {
		return runtime.Permanent(fmt.Errorf("%s %s: %w", op, res.ID, err))
	}
	return nil
}

// parse reads res's Terraform identity; its errors start with op and the ID.
func parse(op string, res *engine.Resource) (*engine.TerraformResource, error) {
	spec, err := engine.ParseTerraform(res)
	if err != nil {
		return nil, runtime.Permanent(fmt.Errorf("%s %w", op, err)) // the error starts with the ID
	}
	return spec, nil
}

// Delete destroys what the resource's recorded state holds. A resource with no
// recorded object is already gone.
func (r *Runtime) Delete(ctx context.Context, res *engine.Resource) error {
	if err := runtime.Interrupted(ctx, "delete", res.ID); err != nil {
		return err
	}
	spec, err := parse("delete", res)
	if err != nil {
		return err
	}
	if !hasInstance(stateOf(res), spec) {
		return nil
	}
	s, err := r.open(ctx, "delete", res)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.configure(ctx, false); err != nil {
		return err
	}
	return s.run(ctx, "destroy", func(ctx context.Context) error { return s.tf.Destroy(ctx) })
}
