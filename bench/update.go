package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/benchstat"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// updateCounted are the resources whose apiserver requests an update row
// counts: the objects, and what kumo's preview asks to settle a change
// without a dry-run (the admission webhooks and policies, an access review).
var updateCounted = []string{"configmaps", "namespaces", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
	"mutatingadmissionpolicies", "validatingadmissionpolicies", "selfsubjectaccessreviews"}

// updateResult is one update row: an update of every ConfigMap (each value
// changed, keys kept) and a rollback to the first revision, kumo against the
// floor, with the apiserver requests kumo's runs sent.
type updateResult struct {
	name string
	n    int
	runs int
	// floor and kumo: update, rollback.
	floor, kumo [2]time.Duration
	// requests: what the apiserver counted during kumo's update and
	// rollback (the row's first run).
	requests [2]localcluster.Requests
}

// timeUpdate runs an update row count times (the median is kept): on the
// floor, v1 applied, then v2 (the update) and v1 again (the rollback: the
// floor of restoring revision 1 is applying its objects) timed; with kumo,
// v1 applied, then an apply of v2 and a rollback to revision 1 timed (from
// the request to the finished run), each checked to have updated every
// ConfigMap. Both sides delete what they made afterwards.
func timeUpdate(ctx context.Context, tmp string, r row, cluster *localcluster.Cluster, fl *floor, parallel, count int) (updateResult, error) {
	res := updateResult{name: r.name, n: r.n, runs: count}
	var floors, kumos [2][]time.Duration
	for k := range count {
		name := fmt.Sprintf("%s-%d", r.name, k)
		v1 := benchspec.ConfigMaps("floor-"+name, r.n, r.chain)
		if err := fl.apply(ctx, v1, r.chain); err != nil {
			return res, fmt.Errorf("%s floor: %w", name, err)
		}
		for i, s := range []*engine.Spec{benchspec.Updated(v1, "2"), v1} {
			start := time.Now()
			if err := fl.apply(ctx, s, r.chain); err != nil {
				return res, fmt.Errorf("%s floor: %w", name, err)
			}
			floors[i] = append(floors[i], time.Since(start))
		}
		if _, err := fl.destroy(ctx, v1, false); err != nil {
			return res, fmt.Errorf("%s floor: %w", name, err)
		}
		took, reqs, err := kumoUpdate(ctx, tmp+"/"+name, "kumo-"+name, r, cluster, parallel)
		if err != nil {
			return res, fmt.Errorf("%s kumo: %w", name, err)
		}
		for i := range took {
			kumos[i] = append(kumos[i], took[i])
		}
		if k == 0 {
			res.requests = reqs
		}
	}
	for i := range 2 {
		res.floor[i] = benchstat.Quantile(floors[i], 0.5)
		res.kumo[i] = benchstat.Quantile(kumos[i], 0.5)
	}
	return res, nil
}

// kumoUpdate applies v1 with kumo, then times the apply of v2 and the
// rollback to revision 1, counting the apiserver requests of each, and
// destroys the stack.
func kumoUpdate(ctx context.Context, home, project string, r row, cluster *localcluster.Cluster, parallel int) (took [2]time.Duration, reqs [2]localcluster.Requests, _ error) {
	k, err := startKumo(ctx, home, false)
	if err != nil {
		return took, reqs, err
	}
	defer k.close()
	settings := runspec.RuntimeSettings{Kubeconfig: cluster.Kubeconfig}
	v1 := benchspec.ConfigMaps(project, r.n, r.chain)
	if _, _, err := k.run(ctx, project, v1, settings, parallel); err != nil {
		return took, reqs, fmt.Errorf("apply: %w", err)
	}
	steps := []struct {
		name  string
		start func() (*client.Run, error)
	}{
		{"update", func() (*client.Run, error) {
			return k.c.Apply(ctx, client.Request{Project: project, Workspace: "default", Spec: benchspec.Updated(v1, "2"), AutoApprove: true, Parallelism: parallel, Settings: settings})
		}},
		{"rollback", func() (*client.Run, error) {
			return k.c.Rollback(ctx, client.Request{Project: project, Workspace: "default", AutoApprove: true, Parallelism: parallel, Settings: settings}, 1, false)
		}},
	}
	for i, s := range steps {
		before, err := cluster.Requests(ctx, updateCounted...)
		if err != nil {
			return took, reqs, err
		}
		start := time.Now()
		run, err := s.start()
		if err != nil {
			return took, reqs, fmt.Errorf("%s: %w", s.name, err)
		}
		out, err := run.Wait(ctx)
		took[i] = time.Since(start)
		if err != nil {
			return took, reqs, fmt.Errorf("%s: %w", s.name, err)
		}
		if err := k.writeTimeline(ctx, project+"-"+s.name, run, took[i]); err != nil {
			return took, reqs, err
		}
		if out.Phase != engine.PhaseSucceeded {
			return took, reqs, fmt.Errorf("%s: phase %s: %s", s.name, out.Phase, out.Error)
		}
		if out.Outcome == nil || out.Outcome.Done.Update != r.n {
			return took, reqs, fmt.Errorf("%s: outcome %+v, want %d updated", s.name, out.Outcome, r.n)
		}
		after, err := cluster.Requests(ctx, updateCounted...)
		if err != nil {
			return took, reqs, err
		}
		reqs[i] = after.Since(before)
	}
	if _, _, err := k.run(ctx, project, nil, settings, parallel); err != nil {
		return took, reqs, fmt.Errorf("destroy: %w", err)
	}
	return took, reqs, nil
}

// lines is the row as the bench prints it while it runs.
func (u updateResult) lines() string {
	var b strings.Builder
	for i, op := range []string{"update", "rollback"} {
		fmt.Fprintf(&b, "  %-9s floor %6ss  kumo %6ss  %6s  requests: %s\n", op, secs(u.floor[i]), secs(u.kumo[i]), ratio(u.kumo[i], u.floor[i]), u.requests[i])
	}
	return b.String()
}

// updateTable: an update of every object and a rollback, against the floor.
func (rep *report) updateTable(b *strings.Builder) {
	b.WriteString("\nUpdate and rollback: kumo applies the ConfigMaps and their Namespace, then an update that changes every ConfigMap's value (keys kept) and a rollback to revision 1 (`client.Rollback`), each timed from the request to the finished run and checked to have updated every ConfigMap. The floor: the same objects applied by raw server-side apply, then the changed ones (update) and the first ones again (rollback: restoring revision 1 is applying its objects). Requests: what the apiserver counted (apiserver_request_total) during kumo's run (the row's first) for ConfigMaps, Namespaces and what the preview asks to settle a change without a dry-run (admission webhook and policy lists, an access review), dry runs apart; the floor sends one apply per ConfigMap and one for the Namespace.\n\n")
	b.WriteString("| row | runs | op | floor s | kumo s | kumo / floor | kumo's apiserver requests |\n| --- | ---: | --- | ---: | ---: | ---: | --- |\n")
	for _, u := range rep.updates {
		for i, op := range []string{"update", "rollback to rev 1"} {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", u.name, u.runs, op, secs(u.floor[i]), secs(u.kumo[i]), ratio(u.kumo[i], u.floor[i]), u.requests[i])
		}
	}
}
