package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/release"

	"github.com/kumoproj/kumo/engine"
)

// Options say what to render and for which cluster.
type Options struct {
	// Chart is a chart directory, a packaged chart (.tgz), or a chart in an
	// OCI registry: oci://host/repository/chart[:version] (see pull).
	Chart string
	// ValueFiles are layered in order (--values), then Set (--set k=v, Helm's
	// syntax), over the chart's own values.yaml.
	ValueFiles []string
	Set        []string
	// ReleaseName is .Release.Name (default: the chart's name); Namespace is
	// .Release.Namespace.
	ReleaseName string
	Namespace   string
	// Capabilities of the target cluster (see Capabilities).
	Capabilities Capabilities
	// IsUpgrade renders .Release.IsUpgrade (true) instead of .Release.IsInstall.
	IsUpgrade bool
}

// Capabilities are what .Capabilities tells a chart about its cluster.
type Capabilities struct {
	// KubeVersion is the cluster's version (v1.36.3).
	KubeVersion string
	// APIVersions are the group/versions and group/version/kinds it serves.
	APIVersions []string
}

// Rendered is a rendered chart.
type Rendered struct {
	Source engine.ChartSource
	// Manifest is the chart's objects as `helm template` prints them (CRDs
	// first), without its hooks.
	Manifest string
	// Hooks are the templates annotated helm.sh/hook, which `helm template`
	// prints too but Helm runs around an install instead of installing.
	Hooks []*release.Hook
}

// Render renders opts.Chart as `helm template --include-crds` would for the
// cluster of opts.Capabilities.
func Render(opts Options) (*Rendered, error) {
	ch, ref, err := load(opts.Chart)
	if err != nil {
		return nil, err
	}
	if reqs := ch.Metadata.Dependencies; len(reqs) > 0 {
		if err := action.CheckDependencies(ch, reqs); err != nil {
			return nil, fmt.Errorf("chart %s: %w (vendor them into charts/, e.g. with helm dependency build)", opts.Chart, err)
		}
	}
	if ch.Metadata.Type == "library" {
		return nil, fmt.Errorf("chart %s: %s is a library chart, which has nothing to install", opts.Chart, ch.Name())
	}
	vals, err := Values(opts.ValueFiles, opts.Set)
	if err != nil {
		return nil, err
	}
	digest, err := ValuesDigest(vals)
	if err != nil {
		return nil, err
	}
	kv, err := chartutil.ParseKubeVersion(opts.Capabilities.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("cluster version %q: %w", opts.Capabilities.KubeVersion, err)
	}

	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun, inst.ClientOnly, inst.Replace, inst.IncludeCRDs = true, true, true, true
	inst.ReleaseName = opts.ReleaseName
	if inst.ReleaseName == "" {
		inst.ReleaseName = ch.Name()
	}
	inst.Namespace = opts.Namespace
	inst.KubeVersion = kv
	inst.APIVersions = chartutil.VersionSet(opts.Capabilities.APIVersions)
	inst.IsUpgrade = opts.IsUpgrade
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", opts.Chart, err)
	}
	return &Rendered{
		Source: engine.ChartSource{
			Chart: ch.Name(), Version: ch.Metadata.Version, AppVersion: ch.Metadata.AppVersion,
			Ref: ref, Release: inst.ReleaseName, ValuesDigest: digest,
		},
		Manifest: rel.Manifest,
		Hooks:    rel.Hooks,
	}, nil
}

// load reads the chart ref names: from its OCI registry, or from the local
// filesystem. It returns the chart and where it was read.
func load(ref string) (*helmchart.Chart, string, error) {
	if IsOCI(ref) {
		return pull(ref)
	}
	ch, err := loader.Load(ref)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %w", ref, err)
	}
	return ch, ref, nil
}

// Values layers value files (local paths, or - for standard input) and --set
// expressions as Helm does. Values files are read from the local filesystem
// only: a URL is refused rather than fetched.
func Values(files, set []string) (map[string]any, error) {
	for _, f := range files {
		if strings.Contains(f, "://") {
			return nil, fmt.Errorf("--values %s: values files are read from the local filesystem; download it first", f)
		}
		if f != "-" {
			if _, err := os.Stat(f); err != nil {
				return nil, fmt.Errorf("--values: %w", err)
			}
		}
	}
	opts := values.Options{ValueFiles: files, Values: set}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, err
	}
	return vals, nil
}

// ValuesDigest identifies the values given to a chart (not the chart's own
// defaults, which its version fixes): sha256 of their JSON, keys sorted.
func ValuesDigest(vals map[string]any) (string, error) {
	data, err := json.Marshal(vals)
	if err != nil {
		return "", fmt.Errorf("values: %w", err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// SplitHooks separates test hooks (helm.sh/hook: test, which helm test runs,
// never an install) from the hooks an install or upgrade would run.
func SplitHooks(hooks []*release.Hook) (install, test []*release.Hook) {
	for _, h := range hooks {
		if len(h.Events) == 1 && h.Events[0] == release.HookTest {
			test = append(test, h)
		} else {
			install = append(install, h)
		}
	}
	return install, test
}

// HookNames lists hooks as "kind/name (events)", for messages.
func HookNames(hooks []*release.Hook) []string {
	out := make([]string, len(hooks))
	for i, h := range hooks {
		ev := make([]string, len(h.Events))
		for j, e := range h.Events {
			ev[j] = string(e)
		}
		out[i] = fmt.Sprintf("%s/%s (%s)", h.Kind, h.Name, strings.Join(ev, ", "))
	}
	return out
}

// WithHooks appends hooks' manifests to manifest, each its own document
// (with the "# Source:" line helm template prints), in the order Helm
// sorted them: their helm.sh/hook annotations make them hooks of the spec
// (engine.ManifestSpec).
func WithHooks(manifest string, hooks []*release.Hook) string {
	var b strings.Builder
	b.WriteString(manifest)
	for _, h := range hooks {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, strings.TrimSpace(h.Manifest))
	}
	return b.String()
}
