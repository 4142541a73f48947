package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/chart"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// The realistic install (issue 32, item 5): a chart of what an application's
// install holds, not only ConfigMaps. A CRD in crds/ and a custom resource of
// its kind per app, a ServiceAccount, a Role and its RoleBinding, and per app
// a ConfigMap, a Secret, a Service and a Deployment of two replicas, whose
// Pods the cluster's kwok Node runs and makes Ready. Every tool waits for
// what an install waits for: the CRD Established before its resources, the
// Deployments available (an upgrade: rolled out). Timed on a cluster of its
// own that runs workloads (kube-scheduler, the workload controllers, kwok),
// started after the other rows so that those run as they always have.
// Helm installs with --wait; its uninstall leaves the CRD of crds/, as Helm
// always does, while the floor and kumo delete it.

// installApps is how many apps the chart installs (five objects each).
const installApps = 10

// installChart writes the chart into dir and returns its path.
func installChart(dir string) (string, error) {
	path := filepath.Join(dir, "chart")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\nappVersion: \"1\"\n",
		"values.yaml": fmt.Sprintf("apps: %d\nversion: \"1\"\nreplicas: 2\n", installApps),
		"crds/widgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.bench.kumo.dev
spec:
  group: bench.kumo.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
		"templates/access.yaml": `apiVersion: v1
kind: ServiceAccount
metadata:
  name: shop
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: shop
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: shop
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: shop}
subjects:
- {kind: ServiceAccount, name: shop, namespace: {{ .Release.Namespace }}}
`,
		"templates/apps.yaml": `{{- range $i := until (int .Values.apps) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-{{ $i }}
data:
  version: {{ $.Values.version | quote }}
  settings.yaml: |
    listen: ":8080"
    app: app-{{ $i }}
---
apiVersion: v1
kind: Secret
metadata:
  name: app-{{ $i }}
stringData:
  token: {{ printf "token-%d-%v" $i $.Values.version | quote }}
---
apiVersion: v1
kind: Service
metadata:
  name: app-{{ $i }}
spec:
  selector: {app: app-{{ $i }}}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{{ $i }}
spec:
  replicas: {{ $.Values.replicas }}
  selector:
    matchLabels: {app: app-{{ $i }}}
  template:
    metadata:
      labels: {app: app-{{ $i }}}
      annotations: {bench.kumo.dev/version: {{ $.Values.version | quote }}}
    spec:
      serviceAccountName: shop
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        env:
        - {name: VERSION, value: {{ $.Values.version | quote }}}
        ports:
        - {containerPort: 8080}
---
apiVersion: bench.kumo.dev/v1
kind: Widget
metadata:
  name: app-{{ $i }}
spec:
  app: app-{{ $i }}
  version: {{ $.Values.version | quote }}
{{- end }}
`,
	}
	for name, data := range files {
		p := filepath.Join(path, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	return path, nil
}

// renderInstall renders the chart with version for the cluster, as `kumo
// apply --chart` does (discovery, then helm template), into a spec.
func renderInstall(cluster *localcluster.Cluster, path, ns, version string) (*engine.Spec, *engine.ChartSource, error) {
	caps, err := chart.Discover(cluster.RESTConfig())
	if err != nil {
		return nil, nil, err
	}
	r, err := chart.Render(chart.Options{Chart: path, Set: []string{"version=" + version}, ReleaseName: "shop", Namespace: ns, Capabilities: caps})
	if err != nil {
		return nil, nil, err
	}
	spec, _, err := input.ReadInputs([]input.File{{Name: "chart shop", Data: []byte(r.Manifest)}}, ns)
	if err != nil {
		return nil, nil, err
	}
	return spec, &r.Source, nil
}

type installResult struct {
	floor, helm, kumo opTimes
	objects           int
	// runs: how many times the floor and kumo ran (their times are the
	// medians); Helm runs once.
	runs int
}

// timeInstall times the install row: the floor and kumo runs times each, one
// right after the other (their medians are kept, as for the other rows of a
// few hundred objects: an operation of a tenth of a second moves by as much
// from one run to the next), then Helm once, each in a namespace of its own on
// a cluster that runs workloads.
func timeInstall(ctx context.Context, dir string, parallel, runs int) (installResult, error) {
	res := installResult{runs: runs}
	fmt.Fprintln(os.Stderr, "install: starting a cluster that runs workloads")
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: filepath.Join(dir, "cluster"), UnsafeNoFsync: true, Workloads: true})
	if err != nil {
		return res, err
	}
	defer cluster.Stop()
	path, err := installChart(dir)
	if err != nil {
		return res, err
	}
	fl, err := newInstallFloor(cluster.RESTConfig(), parallel)
	if err != nil {
		return res, err
	}
	for _, ns := range []string{"floor-install", "helm-install", "kumo-install"} {
		if err := fl.namespace(ctx, ns); err != nil {
			return res, err
		}
	}
	// Each tool starts on a quiet cluster (settle), the first one included:
	// the controllers have just started.
	var floors, kumos []opTimes
	for k := range runs {
		fmt.Fprintf(os.Stderr, "install-%d: floor\n", k)
		if err := fl.settle(ctx, "kumo-install"); err != nil {
			return res, err
		}
		f, objects, err := floorInstall(ctx, fl, cluster, path, "floor-install")
		if err != nil {
			return res, fmt.Errorf("floor: %w", err)
		}
		fmt.Fprintf(os.Stderr, "install-%d: kumo\n", k)
		if err := fl.settle(ctx, "floor-install"); err != nil {
			return res, err
		}
		t, err := kumoInstall(ctx, filepath.Join(dir, fmt.Sprintf("kumo-%d", k)), fmt.Sprintf("kumo-install-%d", k), cluster, path, "kumo-install", parallel)
		if err != nil {
			return res, fmt.Errorf("kumo: %w", err)
		}
		floors, kumos, res.objects = append(floors, f), append(kumos, t), objects
	}
	res.floor, res.kumo = medianOps(floors), medianOps(kumos)
	fmt.Fprintln(os.Stderr, "install: helm")
	if err := fl.settle(ctx, "kumo-install"); err != nil {
		return res, err
	}
	if res.helm, err = helmInstall(ctx, filepath.Join(dir, "helm"), cluster, path, "helm-install"); err != nil {
		return res, fmt.Errorf("helm: %w", err)
	}
	return res, nil
}

// floorInstall: the rendered objects of each revision applied raw, in
// parallel after the CRD is Established, then waited for; the delete, every
// object then the CRD, each waited gone.
func floorInstall(ctx context.Context, fl *installFloor, cluster *localcluster.Cluster, path, ns string) (opTimes, int, error) {
	var t opTimes
	v1, _, err := renderInstall(cluster, path, ns, "1")
	if err != nil {
		return t, 0, err
	}
	v2, _, err := renderInstall(cluster, path, ns, "2")
	if err != nil {
		return t, 0, err
	}
	steps := []struct {
		op   peerOp
		spec *engine.Spec
	}{{opApply, v1}, {opReapply, v1}, {opUpdate, v2}, {opRollback, v1}}
	for _, s := range steps {
		if err := timed(&t[s.op], func() error { return fl.install(ctx, s.spec) }); err != nil {
			return t, 0, fmt.Errorf("%s: %w", peerOpNames[s.op], err)
		}
	}
	err = timed(&t[opDelete], func() error { return fl.uninstall(ctx, v1) })
	return t, len(v1.Resources), err
}

// kumoInstall: the five operations through kumo on the embedded server,
// auto-approved and waiting for health (the default), each apply rendering
// the chart first as `kumo apply --chart` does.
func kumoInstall(ctx context.Context, home, name string, cluster *localcluster.Cluster, path, ns string, parallel int) (opTimes, error) {
	var t opTimes
	k, err := startKumo(ctx, home, false)
	if err != nil {
		return t, err
	}
	defer k.close()
	settings := runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}
	req := client.Request{Project: "install", Workspace: "default", AutoApprove: true, Parallelism: parallel, Settings: settings}
	wait := func(r *client.Run, err error) (*client.Run, error) {
		if err != nil {
			return nil, err
		}
		res, err := r.Wait(ctx)
		if err == nil && res.Phase != engine.PhaseSucceeded {
			err = fmt.Errorf("phase %s: %s", res.Phase, res.Error)
		}
		return r, err
	}
	apply := func(version string) func() (*client.Run, error) {
		return func() (*client.Run, error) {
			spec, src, err := renderInstall(cluster, path, ns, version)
			if err != nil {
				return nil, err
			}
			r := req
			r.Spec, r.Chart = spec, src
			return wait(k.c.Apply(ctx, r))
		}
	}
	steps := []struct {
		op peerOp
		f  func() (*client.Run, error)
	}{
		{opApply, apply("1")},
		{opReapply, apply("1")},
		{opUpdate, apply("2")},
		{opRollback, func() (*client.Run, error) { return wait(k.c.Rollback(ctx, req, 1, false)) }},
		{opDelete, func() (*client.Run, error) { return wait(k.c.Destroy(ctx, req)) }},
	}
	for _, s := range steps {
		var run *client.Run
		if err := timed(&t[s.op], func() (err error) { run, err = s.f(); return err }); err != nil {
			return t, fmt.Errorf("%s: %w", peerOpNames[s.op], err)
		}
		if err := k.writeTimeline(ctx, timelineName(name, s.op), run, t[s.op]); err != nil {
			return t, err
		}
	}
	return t, nil
}

// helmInstall: `helm upgrade --install --wait`, a changed upgrade, `rollback
// --wait` to revision 1 and `uninstall --wait`, each a whole process.
func helmInstall(ctx context.Context, dir string, cluster *localcluster.Cluster, path, ns string) (opTimes, error) {
	var t opTimes
	bin := localcluster.DefaultBinDir()
	helm := filepath.Join(bin, helmTool)
	if err := localcluster.EnsureTools(bin, map[string]string{"helm": helm}); err != nil {
		return t, err
	}
	env := helmEnv(dir, cluster.Kubeconfig)
	upgrade := func(version string) func() error {
		return func() error {
			return runTool(ctx, env, helm, "upgrade", "--install", "shop", path, "-n", ns, "--set", "version="+version, "--wait", "--timeout", "5m")
		}
	}
	steps := []struct {
		op peerOp
		f  func() error
	}{
		{opApply, upgrade("1")},
		{opReapply, upgrade("1")},
		{opUpdate, upgrade("2")},
		{opRollback, func() error {
			return runTool(ctx, env, helm, "rollback", "shop", "1", "-n", ns, "--wait", "--timeout", "5m")
		}},
		{opDelete, func() error {
			return runTool(ctx, env, helm, "uninstall", "shop", "-n", ns, "--wait", "--timeout", "5m")
		}},
	}
	for _, s := range steps {
		if err := timed(&t[s.op], s.f); err != nil {
			return t, err
		}
	}
	return t, nil
}

// installTable: each tool's time per operation and its ratio to the floor's.
func installTable(b *strings.Builder, results []installResult) {
	if len(results) == 0 {
		return
	}
	r := results[0]
	fmt.Fprintf(b, "\nA realistic install, on a cluster of its own that runs workloads (kube-scheduler, the workload controllers, one kwok Node): a chart of %d objects (a CRD in `crds/` and a custom resource of its kind per app; a ServiceAccount, a Role, a RoleBinding; per app a ConfigMap, a Secret, a Service and a Deployment of 2 replicas), %d apps; the changed upgrade changes every app (a new Pod template: a rollout). Every tool waits as an install does: the CRD Established before its resources, every Deployment available or rolled out. The floor: raw parallel server-side apply of the rendered objects, the CRD first, then polls every 20 ms for the Deployments; its delete removes every object and then the CRD, each waited gone. Helm (%s): `upgrade --install --wait`, `rollback --wait`, `uninstall --wait` (which leaves the CRD, as Helm always does). kumo: `kumo apply --chart` as the CLI runs it (discovery and rendering included), auto-approved, waiting for health; its destroy deletes the CRD too. The floor and kumo ran %d times each, kumo right after the floor (the median of each operation), Helm once. Seconds, and the ratio to the floor:\n\n", r.objects, installApps, helmTool, r.runs)
	b.WriteString("| row | tool |")
	for _, name := range peerOpNames {
		b.WriteString(" " + name + " |")
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", int(numPeerOps)) + "\n")
	for _, tool := range []struct {
		name string
		t    opTimes
	}{{"floor (raw SSA)", r.floor}, {"Helm", r.helm}, {"kumo", r.kumo}} {
		fmt.Fprintf(b, "| install | %s |", tool.name)
		for op := range numPeerOps {
			if tool.name == "floor (raw SSA)" || r.floor[op] == 0 {
				fmt.Fprintf(b, " %s |", secs(tool.t[op]))
				continue
			}
			fmt.Fprintf(b, " %s (%.1f×) |", secs(tool.t[op]), float64(tool.t[op])/float64(r.floor[op]))
		}
		b.WriteString("\n")
	}
}

func (r installResult) lines() string {
	var b strings.Builder
	installTable(&b, []installResult{r})
	return b.String()
}
