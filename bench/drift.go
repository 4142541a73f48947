package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// driftResult is one drift check of n ConfigMaps (and their Namespace) that
// kumo applied: kumo's figure only, a check has no floor to compare with.
type driftResult struct {
	name         string
	n            int
	apply, check time.Duration
	// requests the apiserver served during the check, by "VERB resource"
	// (localcluster.Requests), for ConfigMaps and Namespaces.
	requests localcluster.Requests
}

// timeDrift applies r's ConfigMaps with kumo, then times a drift check of
// them (client.CheckDrift: the DriftCheck workflow, warn mode) and counts the
// apiserver requests it made. The check must find every resource in sync.
// The objects are left in place: drift rows run last, on a cluster the bench
// throws away.
func timeDrift(ctx context.Context, home, project string, r row, settings runspec.RuntimeSettings, parallel int, cluster *localcluster.Cluster) (driftResult, error) {
	res := driftResult{name: r.name, n: r.n}
	k, err := startKumo(ctx, home, false)
	if err != nil {
		return res, err
	}
	defer k.close()
	if res.apply, _, err = k.run(ctx, project, benchspec.ConfigMaps(project, r.n, false), settings, parallel); err != nil {
		return res, fmt.Errorf("apply: %w", err)
	}
	before, err := cluster.Requests(ctx, "configmaps", "namespaces")
	if err != nil {
		return res, err
	}
	start := time.Now()
	rep, err := k.c.CheckDrift(ctx, client.DriftRequest{Project: project, Workspace: "default", Settings: settings, Parallelism: parallel})
	res.check = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("drift check: %w", err)
	}
	after, err := cluster.Requests(ctx, "configmaps", "namespaces")
	if err != nil {
		return res, err
	}
	if c := rep.Counts; c.Resources != r.n+1 || c.InSync != r.n+1 {
		return res, fmt.Errorf("drift check: %d resources, %d in sync; want %d in sync", c.Resources, c.InSync, r.n+1)
	}
	res.requests = after.Since(before)
	return res, nil
}
