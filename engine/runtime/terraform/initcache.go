package terraform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/kumoproj/kumo/engine/runtime"
)

// Working directories are a cache shared by every kumo home of the user (and by
// workers on one machine), so an initialised directory may outlive what it was
// initialised from: the filesystem mirror its provider was linked from may be
// moved or deleted, the CLI configuration may name another one, the shared plugin
// cache may be cleaned. Three things keep the cache from failing every later run
// with "Required plugins are not installed":
//   - the init marker is keyed on everything that decides provider installation:
//     the binary, the provider's source and version, the plugin directory, and
//     the CLI configuration (which file, and its content, which names the mirrors);
//   - before skipping init, the provider the directory links to must still be
//     there (its links resolve to an executable);
//   - a command that fails because the provider is missing anyway (something
//     removed it between that check and the command) re-initialises once and
//     runs again.

// configure writes main.tf.json (with the resource block or only the provider)
// and runs terraform init unless the directory was initialised for the same
// provider installation and its provider is still installed.
func (s *session) configure(ctx context.Context, withResource bool) error {
	cfg, err := mainConfig(s.spec, s.res.Attributes, withResource)
	if err != nil {
		return runtime.Permanent(fmt.Errorf("%s %s: %w", s.op, s.res.ID, err))
	}
	if err := os.WriteFile(filepath.Join(s.dir, configFile), cfg, 0o644); err != nil {
		return fmt.Errorf("%s %s: %w", s.op, s.res.ID, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, initMarker)); err == nil && string(b) == s.initKey() && s.providerInstalled() {
		return nil
	}
	return s.initialize(ctx)
}

// initialize runs terraform init and records what it was for.
func (s *session) initialize(ctx context.Context) error {
	unlock, err := s.r.lockCache(ctx, s.spec.Provider)
	if err != nil {
		return fmt.Errorf("%s %s: lock the plugin cache: %w", s.op, s.res.ID, err)
	}
	defer unlock()
	opts := []tfexec.InitOption{tfexec.Upgrade(false)}
	if d := s.r.cfg.PluginDir; d != "" {
		opts = append(opts, tfexec.PluginDir(d))
	}
	if err := s.run(ctx, "init", func(ctx context.Context) error { return s.tf.Init(ctx, opts...) }); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, initMarker), []byte(s.initKey()), 0o644)
}

// initKey identifies what an init installs from (see the top of this file).
func (s *session) initKey() string {
	p := s.spec.Provider
	sum := sha256.Sum256([]byte(strings.Join([]string{s.bin, p.Source(), p.Version, s.r.cfg.PluginDir, cliConfig()}, "\n")))
	return hex.EncodeToString(sum[:])
}

// cliConfig names the CLI configuration terraform (or tofu) reads, with its
// content: the file TF_CLI_CONFIG_FILE (or TOFU_CLI_CONFIG_FILE) names, else
// ~/.terraformrc and ~/.tofurc. A missing file counts as empty.
func cliConfig() string {
	var files []string
	for _, env := range []string{"TF_CLI_CONFIG_FILE", "TOFU_CLI_CONFIG_FILE"} {
		if f := os.Getenv(env); f != "" {
			files = append(files, env+"="+f)
		}
	}
	if len(files) == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			files = []string{"=" + filepath.Join(home, ".terraformrc"), "=" + filepath.Join(home, ".tofurc")}
		}
	}
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f[strings.IndexByte(f, '=')+1:])
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s %x\n", f, sum)
	}
	return b.String()
}

// providerInstalled reports whether the directory's .terraform/providers holds
// the provider as an executable (following the links into the plugin cache and
// from there into a mirror). The builtin provider needs nothing.
func (s *session) providerInstalled() bool {
	p := s.spec.Provider
	if p.Builtin() {
		return true
	}
	version := "*"
	if exactVersion.MatchString(p.Version) {
		version = p.Version
	}
	pattern := filepath.Join(s.dir, ".terraform", "providers", p.Host, p.Namespace, p.Name, version, goruntime.GOOS+"_"+goruntime.GOARCH, "terraform-provider-"+p.Name+"*")
	matches, _ := filepath.Glob(pattern)
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// missingProvider matches terraform's diagnostics when a working directory's
// provider is not (or no longer) installed.
var missingProvider = regexp.MustCompile(`Required plugins are not installed|Missing required provider|Inconsistent dependency lock file`)
