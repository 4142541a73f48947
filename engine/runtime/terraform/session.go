package terraform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// Files of a working directory.
const (
	configFile = "main.tf.json"
	stateFile  = "terraform.tfstate"
	planFile   = "kumo.tfplan"
	initMarker = ".kumo-init" // what the last successful init was for
	lockName   = ".kumo.lock"
)

// session is one operation on one resource's working directory, which it holds
// locked until close.
type session struct {
	r    *Runtime
	op   string // apply, preview, read or delete: how every error starts
	res  *engine.Resource
	spec *engine.TerraformResource
	dir  string
	bin  string
	tf   *tfexec.Terraform
	// stderr is terraform's standard error of the command running now.
	stderr strings.Builder
	unlock func()
	// sensitive are the attributes the provider marks sensitive (loadSensitive).
	sensitive []string
	// reinitialised is set once a command that found its provider missing made
	// run initialise the directory again: that happens once per session.
	reinitialised bool
}

// open locks res's working directory and writes res's recorded terraform state
// into it, replacing whatever an earlier operation left there.
func (r *Runtime) open(ctx context.Context, op string, res *engine.Resource) (*session, error) {
	spec, err := parse(op, res)
	if err != nil {
		return nil, err
	}
	// The last guard before terraform init downloads and starts the provider.
	if !engine.ProviderAllowed(r.cfg.AllowedProviders, spec.Provider) {
		return nil, runtime.Permanent(fmt.Errorf("%s %s: provider %s is not allowed in this workspace: add it to runtimes.terraform.allowedProviders (allowed: %s)",
			op, res.ID, spec.Provider.Source(), strings.Join(r.cfg.AllowedProviders, ", ")))
	}
	bin, err := r.binary()
	if err != nil {
		return nil, runtime.Permanent(fmt.Errorf("%s %s: %w", op, res.ID, err))
	}
	dir := filepath.Join(r.work, dirName(res.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, res.ID, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, lockName), true)
	if err != nil {
		return nil, fmt.Errorf("%s %s: lock working directory: %w", op, res.ID, err)
	}
	s := &session{r: r, op: op, res: res, spec: spec, dir: dir, bin: bin, unlock: unlock}
	if s.tf, err = r.handle(dir, bin); err == nil {
		err = s.restore()
	}
	if err != nil {
		unlock()
		return nil, fmt.Errorf("%s %s: %w", op, res.ID, err)
	}
	return s, nil
}

func (s *session) close() { s.unlock() }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// dirName names a resource's working directory: readable, and unique by a hash
// of the whole ID.
func dirName(id string) string {
	sum := sha256.Sum256([]byte(id))
	name := unsafeName.ReplaceAllString(id, "_")
	if len(name) > 80 {
		name = name[:80]
	}
	return name + "-" + hex.EncodeToString(sum[:6])
}

// restore makes the directory's state the resource's recorded one, or none.
func (s *session) restore() error {
	path := filepath.Join(s.dir, stateFile)
	for _, stale := range []string{path + ".backup", filepath.Join(s.dir, planFile)} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	st := stateOf(s.res)
	if st == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(path, []byte(st), 0o600)
}

// address is the resource's address in the configuration.
func (s *session) address() string { return s.spec.Type + "." + s.spec.Name }

// run runs one terraform command, turning its failure into an error that names
// the operation, the resource and terraform's diagnostics. The error is
// permanent unless the diagnostics tell of a passing failure (see retryable). A
// command that finds the directory's provider missing initialises it again and
// runs once more.
func (s *session) run(ctx context.Context, command string, f func(ctx context.Context) error) error {
	s.stderr.Reset()
	s.tf.SetStderr(&s.stderr)
	// terraform-exec starts terraform with Pdeathsig, which Linux delivers when
	// the thread that started the process exits, not the process: keep this
	// goroutine on its thread until terraform has exited.
	goruntime.LockOSThread()
	err := f(ctx)
	goruntime.UnlockOSThread()
	if err == nil {
		return nil
	}
	msg := diagnostics(s.stderr.String())
	if ctx.Err() != nil {
		if msg != "" {
			msg = ": " + msg
		}
		return fmt.Errorf("%s %s: terraform %s interrupted (%w)%s", s.op, s.res.ID, command, ctx.Err(), msg)
	}
	if msg == "" {
		msg = err.Error()
	}
	if command != "init" && !s.reinitialised && missingProvider.MatchString(msg) {
		// The provider went missing after configure checked it: terraform ran
		// nothing, so initialise again and run the command once more.
		s.reinitialised = true
		if err := s.initialize(ctx); err != nil {
			return err
		}
		return s.run(ctx, command, f)
	}
	failed := fmt.Errorf("%s %s: terraform %s: %s", s.op, s.res.ID, command, msg)
	if retryable(msg) {
		return failed
	}
	return runtime.Permanent(failed)
}

// result reads the directory's state: the resource as it records it, carrying
// the state, or nil when the state holds no such resource. The attributes come
// from the output of the whole resource when a successful apply just wrote it
// (fresh), else from `terraform show -json` of the state.
func (s *session) result(ctx context.Context, fresh bool) (*engine.Resource, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
	}
	st, err := parseState(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
	}
	if !st.holds(s.spec) {
		return nil, nil
	}
	if err := s.loadSensitive(ctx); err != nil {
		return nil, err
	}
	if attrs := st.output(); fresh && attrs != nil {
		return s.resource(attrs, string(data)), nil
	}
	var shown *tfjson.State
	if err := s.run(ctx, "show", func(ctx context.Context) (err error) {
		shown, err = s.tf.Show(ctx, tfexec.JSONNumber(true))
		return err
	}); err != nil {
		return nil, err
	}
	if shown.Values != nil && shown.Values.RootModule != nil {
		for _, r := range shown.Values.RootModule.Resources {
			if r.Address == s.address() {
				attrs, _ := engine.Normalize(r.AttributeValues).(map[string]any)
				return s.resource(attrs, string(data)), nil
			}
		}
	}
	return nil, fmt.Errorf("%s %s: terraform show lists no %s, though the state holds it", s.op, s.res.ID, s.address())
}

// resource is s.res with other attributes and the given terraform state.
func (s *session) resource(attrs map[string]any, state string) *engine.Resource {
	ext := make(map[string]any, len(s.res.Extensions)+1)
	for k, v := range s.res.Extensions {
		ext[k] = v
	}
	ext[engine.ExtTerraformState] = state
	s.markSensitive(ext)
	return &engine.Resource{ID: s.res.ID, Type: s.res.Type, Attributes: attrs, DependsOn: s.res.DependsOn, Extensions: ext}
}
