package input

// This file renders a Kustomize directory (`kumo apply -k DIR`, or -f DIR
// holding a kustomization file) as `kubectl kustomize DIR` does, with
// sigs.k8s.io/kustomize/api's krusty, into one input of plain manifests.
//
// Rendering is offline and local: kustomize would clone a git repository for a
// remote base or fetch a URL for a remote file, so every kustomization the
// directory reaches is read first and an entry kustomize would take as remote
// is refused, naming the kustomization file, the field and the entry. krusty's
// default options keep what it loads under each kustomization's root and
// disable plugins (no executables, no Helm inflation).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// KustomizationFile is the kustomization file of dir (kustomization.yaml,
// kustomization.yml or Kustomization, as kustomize looks for them), or "" when
// dir has none.
func KustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Kustomize renders the kustomization in dir as `kubectl kustomize dir` does
// and returns the result as one input, named after the kustomization file.
// Remote bases, components and files are refused (see checkLocal); the
// rendered output is bounded by MaxSize like any other input.
func Kustomize(dir string) (File, error) {
	kfile := KustomizationFile(dir)
	if kfile == "" {
		return File{}, fmt.Errorf("%s: no kustomization file (%s)", dir, strings.Join(konfig.RecognizedKustomizationFileNames(), ", "))
	}
	if err := checkLocal(dir, map[string]bool{}); err != nil {
		return File{}, err
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return File{}, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return File{}, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	name := kfile + " (rendered by kustomize)"
	if int64(len(out)) > MaxSize() {
		return File{}, TooLarge(name, int64(len(out)))
	}
	return File{Name: name, Data: out}, nil
}

// checkLocal refuses a kustomization (dir's, and those of the local
// directories it names as resources, bases or components, recursively) with an
// entry kustomize would fetch from the network or clone with git.
func checkLocal(dir string, seen map[string]bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if seen[abs] {
		return nil // kustomize reports cycles itself
	}
	seen[abs] = true
	kfile := KustomizationFile(dir)
	if kfile == "" {
		return nil // a plain directory: kustomize says what is wrong with it
	}
	data, err := ReadFile(kfile)
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return fmt.Errorf("%s: %w", kfile, err)
	}
	var errs []error
	refuse := func(field, entry string) {
		errs = append(errs, fmt.Errorf("%s: %s entry %q is remote: kumo renders kustomizations offline, from the local filesystem only; vendor it into a local directory and name that instead", kfile, field, entry))
	}
	files := func(field string, entries ...string) {
		for _, e := range entries {
			if isRemote(e) {
				refuse(field, e)
			}
		}
	}
	dirs := func(field string, entries []string) {
		for _, e := range entries {
			if isRemote(e) {
				refuse(field, e)
				continue
			}
			sub := filepath.Join(dir, e)
			if st, err := os.Stat(sub); err == nil && st.IsDir() {
				if err := checkLocal(sub, seen); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	dirs("resources", k.Resources)
	dirs("bases", k.Bases)
	dirs("components", k.Components)
	files("crds", k.Crds...)
	files("configurations", k.Configurations...)
	files("generators", k.Generators...)
	files("transformers", k.Transformers...)
	files("validators", k.Validators...)
	files("openapi.path", k.OpenAPI["path"])
	for _, p := range k.PatchesStrategicMerge {
		files("patchesStrategicMerge", string(p))
	}
	for _, p := range append(k.Patches, k.PatchesJson6902...) {
		files("patches.path", p.Path)
	}
	for _, r := range k.Replacements {
		files("replacements.path", r.Path)
	}
	generated := func(field string, s types.KvPairSources, envSource string) {
		files(field+".envs", append(s.EnvSources, envSource)...)
		for _, f := range s.FileSources {
			// files entries are "path" or "key=path".
			_, path, found := strings.Cut(f, "=")
			if !found {
				path = f
			}
			files(field+".files", path)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		generated("configMapGenerator", g.KvPairSources, g.EnvSource)
	}
	for _, g := range k.SecretGenerator {
		generated("secretGenerator", g.KvPairSources, g.EnvSource)
	}
	return errors.Join(errs...)
}

// scpUser is the "user@" that starts an SCP-style git URL (git@github.com:org/repo).
var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would take entry as a remote location:
// a URL (http, https, ssh, file: a git clone or an HTTP fetch), an SCP-style
// git address, or a github.com path (which kustomize clones even without a
// scheme), with or without go-getter's "git::" prefix. An inline patch or
// generator (several lines of YAML) is not a location.
func isRemote(entry string) bool {
	e := strings.ToLower(strings.TrimSpace(entry))
	if e == "" || strings.Contains(e, "\n") {
		return false
	}
	e = strings.TrimPrefix(e, "git::")
	return strings.Contains(e, "://") || scpUser.MatchString(e) ||
		strings.HasPrefix(e, "github.com/") || strings.HasPrefix(e, "github.com:")
}
