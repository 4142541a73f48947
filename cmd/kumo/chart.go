package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/chart"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/runspec"
)

// chartOnlyFlags are the flags that mean something only with --chart.
var chartOnlyFlags = []string{"values", "set", "release-name", "no-hooks"}

// onlyWithChart refuses --values, --set and --release-name without --chart,
// rather than ignoring them.
func onlyWithChart(c *cli.Context) error {
	if c.String("chart") != "" {
		return nil
	}
	for _, f := range chartOnlyFlags {
		if c.IsSet(f) {
			return fmt.Errorf("--%s goes with --chart", f)
		}
	}
	return nil
}

// renderChart renders --chart as helm template would for the cluster of rs
// (its version and API versions, asked with discovery), in namespace ns, and
// returns the manifests as one input and what was rendered, for the release.
// The chart's Helm hooks come along in the manifests (their helm.sh/hook
// annotations make them the spec's hooks, run around the apply, never
// managed), unless --no-hooks leaves out the install, upgrade, rollback and
// delete hooks, as helm install --no-hooks does; test hooks always come
// along, for kumo test.
func renderChart(c *cli.Context, rs runspec.RuntimeSettings, ns string, stderr io.Writer) (input.File, *engine.ChartSource, error) {
	ref := c.String("chart")
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = rs.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: rs.Context}).ClientConfig()
	if err != nil {
		return input.File{}, nil, fmt.Errorf("--chart %s is rendered for the target cluster, whose kubeconfig cannot be read: %w", ref, err)
	}
	caps, err := chart.Discover(cfg)
	if err != nil {
		return input.File{}, nil, fmt.Errorf("--chart %s: %w", ref, err)
	}
	r, err := chart.Render(chart.Options{
		Chart: ref, ValueFiles: c.StringSlice("values"), Set: c.StringSlice("set"),
		ReleaseName: c.String("release-name"), Namespace: ns, Capabilities: caps,
	})
	if err != nil {
		return input.File{}, nil, err
	}
	hooks, tests := chart.SplitHooks(r.Hooks)
	manifest := r.Manifest
	if len(hooks) > 0 && c.Bool("no-hooks") {
		fmt.Fprintf(stderr, "Warning: --no-hooks: chart %s's Helm hooks are left out: %s\n", r.Source.Chart, strings.Join(chart.HookNames(hooks), "; "))
		hooks = nil
	}
	if len(tests) > 0 {
		fmt.Fprintf(stderr, "Note: chart %s's test hooks are kept for kumo test, never applied: %s\n", r.Source.Chart, strings.Join(chart.HookNames(tests), "; "))
	}
	manifest = chart.WithHooks(manifest, append(hooks, tests...))
	name := fmt.Sprintf("chart %s %s (rendered by helm)", r.Source.Chart, r.Source.Version)
	if int64(len(manifest)) > input.MaxSize() {
		return input.File{}, nil, input.TooLarge(name, int64(len(manifest)))
	}
	if strings.TrimSpace(r.Manifest) == "" {
		return input.File{}, nil, errors.New(name + ": renders no objects")
	}
	return input.File{Name: name, Data: []byte(manifest)}, &r.Source, nil
}
