package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/benchstat"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// Peers (issue 32): what a user would otherwise run on the same objects,
// timed in the same run on the same cluster next to the floor and kumo:
// `kubectl apply --server-side` and Helm v3 (`upgrade --install`, `rollback`,
// `uninstall`), each whole process as a user runs it, each in a namespace of
// its own. Five operations: the apply, a no-op re-apply, an update of every
// object, a rollback to the first revision and the delete.

// Versions of the peers, as hack/build-tools.sh builds them (kubectl at the
// local cluster's version; Helm at the SDK kumo renders charts with).
const (
	kubectlTool = "kubectl-" + localcluster.KubernetesVersion
	helmTool    = "helm-v3.21.4"
)

type peerOp int

const (
	opApply peerOp = iota
	opReapply
	opUpdate
	opRollback
	opDelete
	numPeerOps
)

var peerOpNames = [numPeerOps]string{"apply", "no-op re-apply", "every object changed", "rollback to rev 1", "delete / destroy"}

// opTimes are one tool's times per operation; zero: the tool has no such
// verb (kubectl has no rollback).
type opTimes [numPeerOps]time.Duration

type peerResult struct {
	row                        row
	floor, kubectl, helm, kumo opTimes
	// runs: how many times the floor and kumo ran (their times are the
	// medians); kubectl and Helm run once.
	runs int
	// kumoNSFinalize: part of kumo's destroy, the Namespace's finalization
	// (kubectl's delete waits for it too; Helm's uninstall leaves the
	// namespace, which it does not own).
	kumoNSFinalize time.Duration
}

// timePeers times the row's five operations by each tool: the floor and kumo
// runs times each, one right after the other (their medians are kept),
// kubectl and Helm once.
func timePeers(ctx context.Context, dir string, r row, cluster *localcluster.Cluster, fl *floor, parallel, runs int) (peerResult, error) {
	res := peerResult{row: r, runs: runs}
	bin := localcluster.DefaultBinDir()
	kubectl, helm := filepath.Join(bin, kubectlTool), filepath.Join(bin, helmTool)
	if err := localcluster.EnsureTools(bin, map[string]string{"kubectl": kubectl, "helm": helm}); err != nil {
		return res, err
	}
	// kumo right after the floor, as every other row runs them: the peers
	// take minutes (kubectl's delete above all), through which the
	// cluster's own pace moves, and their ratios are many times what it
	// moves by.
	var floors, kumos []opTimes
	var finalizations []time.Duration
	for k := range runs {
		fmt.Fprintf(os.Stderr, "%s-%d: floor\n", r.name, k)
		f, err := floorOps(ctx, fl, fmt.Sprintf("floor-%s-%d", r.name, k), r.n)
		if err != nil {
			return res, fmt.Errorf("floor: %w", err)
		}
		fmt.Fprintf(os.Stderr, "%s-%d: kumo\n", r.name, k)
		t, fin, err := kumoOps(ctx, filepath.Join(dir, fmt.Sprintf("kumo-%d", k)), fmt.Sprintf("kumo-%s-%d", r.name, k), r.n, runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}, parallel)
		if err != nil {
			return res, fmt.Errorf("kumo: %w", err)
		}
		floors, kumos, finalizations = append(floors, f), append(kumos, t), append(finalizations, fin)
	}
	res.floor, res.kumo = medianOps(floors), medianOps(kumos)
	res.kumoNSFinalize = benchstat.Quantile(finalizations, 0.5)
	var err error
	fmt.Fprintf(os.Stderr, "%s: kubectl\n", r.name)
	if res.kubectl, err = kubectlOps(ctx, filepath.Join(dir, "kubectl"), kubectl, cluster.Kubeconfig, "kubectl-"+r.name, r.n); err != nil {
		return res, fmt.Errorf("kubectl: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%s: helm\n", r.name)
	if res.helm, err = helmOps(ctx, filepath.Join(dir, "helm"), helm, cluster.Kubeconfig, "helm-"+r.name, r.n); err != nil {
		return res, fmt.Errorf("helm: %w", err)
	}
	return res, nil
}

// medianOps is each operation's median over runs.
func medianOps(runs []opTimes) opTimes {
	var out opTimes
	for op := range numPeerOps {
		ds := make([]time.Duration, len(runs))
		for i, t := range runs {
			ds[i] = t[op]
		}
		out[op] = benchstat.Quantile(ds, 0.5)
	}
	return out
}

func timed(t *time.Duration, f func() error) error {
	start := time.Now()
	err := f()
	*t = time.Since(start)
	return err
}

// floorOps: raw parallel server-side apply of each revision's objects (a
// rollback applies the first revision's again), and the floor's delete.
func floorOps(ctx context.Context, fl *floor, ns string, n int) (opTimes, error) {
	var t opTimes
	spec := benchspec.ConfigMaps(ns, n, false)
	changed := benchspec.Updated(spec, "2")
	steps := []struct {
		op   peerOp
		spec *engine.Spec
	}{{opApply, spec}, {opReapply, spec}, {opUpdate, changed}, {opRollback, spec}}
	for _, s := range steps {
		if err := timed(&t[s.op], func() error { return fl.apply(ctx, s.spec, false) }); err != nil {
			return t, fmt.Errorf("%s: %w", peerOpNames[s.op], err)
		}
	}
	err := timed(&t[opDelete], func() error { _, err := fl.destroy(ctx, spec, false); return err })
	return t, err
}

// manifests is spec's objects as one YAML stream.
func manifests(spec *engine.Spec) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range spec.Resources {
		y, err := yaml.Marshal(r.Attributes)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

// helmEnv is the environment Helm runs in: the cluster of kubeconfig, and
// its cache, configuration and data under dir, apart from the user's.
func helmEnv(dir, kubeconfig string) []string {
	return []string{"KUBECONFIG=" + kubeconfig, "HELM_CACHE_HOME=" + dir + "/cache", "HELM_CONFIG_HOME=" + dir + "/config", "HELM_DATA_HOME=" + dir + "/data"}
}

func runTool(ctx context.Context, env []string, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, tail(out.String(), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// kubectlOps: kubectl apply --server-side of each revision's file, and
// kubectl delete of the first, which waits until the objects (the Namespace
// among them) are gone. kubectl has no rollback.
func kubectlOps(ctx context.Context, dir, kubectl, kubeconfig, ns string, n int) (opTimes, error) {
	var t opTimes
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return t, err
	}
	spec := benchspec.ConfigMaps(ns, n, false)
	files := map[string]*engine.Spec{"v1.yaml": spec, "v2.yaml": benchspec.Updated(spec, "2")}
	for name, s := range files {
		data, err := manifests(s)
		if err != nil {
			return t, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return t, err
		}
	}
	env := []string{"KUBECONFIG=" + kubeconfig}
	apply := func(file string) func() error {
		return func() error {
			return runTool(ctx, env, kubectl, "apply", "--server-side", "--field-manager", "kubectl-bench", "-f", filepath.Join(dir, file))
		}
	}
	for _, s := range []struct {
		op   peerOp
		file string
	}{{opApply, "v1.yaml"}, {opReapply, "v1.yaml"}, {opUpdate, "v2.yaml"}} {
		if err := timed(&t[s.op], apply(s.file)); err != nil {
			return t, err
		}
	}
	// The file's Namespace comes first, and on a slow machine the namespace
	// controller removes some ConfigMaps before kubectl's own deletes reach
	// them: those are gone as asked, not an error.
	err := timed(&t[opDelete], func() error {
		return runTool(ctx, env, kubectl, "delete", "--wait=true", "--ignore-not-found", "-f", filepath.Join(dir, "v1.yaml"))
	})
	return t, err
}

// helmOps: a chart of one template holding the same ConfigMaps (a value
// changes every one as benchspec.Updated does), installed and upgraded with `helm
// upgrade --install`, rolled back to revision 1, and uninstalled (with
// --wait); Helm creates the namespace (--create-namespace) and does not
// delete it.
func helmOps(ctx context.Context, dir, helm, kubeconfig, ns string, n int) (opTimes, error) {
	var t opTimes
	chart := filepath.Join(dir, "chart")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		return t, err
	}
	var tpl bytes.Buffer
	spec := benchspec.ConfigMaps(ns, n, false)
	for _, r := range spec.Resources[1:] {
		md := r.Attributes["metadata"].(map[string]any)
		fmt.Fprintf(&tpl, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  index: \"%s{{ .Values.suffix }}\"\n",
			md["name"], r.Attributes["data"].(map[string]any)["index"])
	}
	files := map[string][]byte{
		"Chart.yaml":                []byte("apiVersion: v2\nname: bench\nversion: 0.1.0\n"),
		"values.yaml":               []byte("suffix: \"\"\n"),
		"templates/configmaps.yaml": tpl.Bytes(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(chart, name), data, 0o644); err != nil {
			return t, err
		}
	}
	env := helmEnv(dir, kubeconfig)
	upgrade := func(extra ...string) func() error {
		return func() error {
			return runTool(ctx, env, helm, append([]string{"upgrade", "--install", "bench", chart, "-n", ns, "--create-namespace"}, extra...)...)
		}
	}
	steps := []struct {
		op peerOp
		f  func() error
	}{
		{opApply, upgrade()},
		{opReapply, upgrade()},
		{opUpdate, upgrade("--set", "suffix=-2")},
		{opRollback, func() error { return runTool(ctx, env, helm, "rollback", "bench", "1", "-n", ns) }},
		{opDelete, func() error { return runTool(ctx, env, helm, "uninstall", "bench", "-n", ns, "--wait") }},
	}
	for _, s := range steps {
		if err := timed(&t[s.op], s.f); err != nil {
			return t, err
		}
	}
	return t, nil
}

// kumoOps: the same five through kumo on the embedded server (in process,
// as the other rows run it), auto-approved: apply, re-apply, apply of the
// changed spec, rollback to revision 1, destroy.
func kumoOps(ctx context.Context, home, project string, n int, settings runspec.RuntimeSettings, parallel int) (opTimes, time.Duration, error) {
	var t opTimes
	k, err := startKumo(ctx, home, false)
	if err != nil {
		return t, 0, err
	}
	defer k.close()
	spec := benchspec.ConfigMaps(project, n, false)
	for _, s := range []struct {
		op   peerOp
		spec *engine.Spec
	}{{opApply, spec}, {opReapply, spec}, {opUpdate, benchspec.Updated(spec, "2")}} {
		var run *client.Run
		if t[s.op], run, err = k.run(ctx, project, s.spec, settings, parallel); err != nil {
			return t, 0, fmt.Errorf("%s: %w", peerOpNames[s.op], err)
		}
		if err := k.writeTimeline(ctx, timelineName(project, s.op), run, t[s.op]); err != nil {
			return t, 0, err
		}
	}
	err = timed(&t[opRollback], func() error {
		r, err := k.c.Rollback(ctx, client.Request{Project: project, Workspace: "default", AutoApprove: true, Parallelism: parallel, Settings: settings}, 1, false)
		if err != nil {
			return err
		}
		res, err := r.Wait(ctx)
		if err == nil && res.Phase != engine.PhaseSucceeded {
			err = fmt.Errorf("phase %s: %s", res.Phase, res.Error)
		}
		return err
	})
	if err != nil {
		return t, 0, fmt.Errorf("rollback: %w", err)
	}
	took, run, err := k.run(ctx, project, nil, settings, parallel)
	if err != nil {
		return t, 0, fmt.Errorf("destroy: %w", err)
	}
	t[opDelete] = took
	h, err := k.history(ctx, run)
	return t, h.lastDelete, err
}

// peersTable is the table: each tool's time per operation and its
// ratio to the floor's.
func peersTable(b *strings.Builder, results []peerResult) {
	if len(results) == 0 {
		return
	}
	b.WriteString("\nPeers on the same objects (a Namespace and its ConfigMaps), in this run on this cluster, each in a namespace of its own: the floor; `kubectl apply --server-side` and `kubectl delete --wait` (" + kubectlTool + ", no rollback verb); Helm (" + helmTool + ": `upgrade --install` of a chart of one template, `rollback` to revision 1, `uninstall --wait`, which leaves the namespace); kumo on the embedded server in this process, auto-approved (its destroy includes the Namespace's finalization), timed right after the floor, then kubectl and Helm. The floor and kumo ran " + fmt.Sprint(results[0].runs) + " times each (the median of each operation), kubectl and Helm once. Seconds, and the ratio to the floor:\n\n")
	b.WriteString("| row | tool |")
	for _, name := range peerOpNames {
		b.WriteString(" " + name + " |")
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", int(numPeerOps)) + "\n")
	for _, r := range results {
		for _, tool := range []struct {
			name string
			t    opTimes
		}{{"floor (raw SSA)", r.floor}, {"kubectl", r.kubectl}, {"Helm", r.helm}, {"kumo", r.kumo}} {
			fmt.Fprintf(b, "| %s | %s |", r.row.name, tool.name)
			for op := range numPeerOps {
				switch d := tool.t[op]; {
				case d == 0:
					b.WriteString(" — |")
				case tool.name == "floor (raw SSA)" || r.floor[op] == 0:
					fmt.Fprintf(b, " %s |", secs(d))
				default:
					fmt.Fprintf(b, " %s (%.1f×) |", secs(d), float64(d)/float64(r.floor[op]))
				}
			}
			b.WriteString("\n")
		}
	}
}

func (r peerResult) lines() string {
	var b strings.Builder
	peersTable(&b, []peerResult{r})
	return b.String()
}
