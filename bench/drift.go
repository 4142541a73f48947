package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/benchspec"
	"github.com/kumoproj/kumo/runspec"
)

// driftResult is one drift check of n ConfigMaps (and their Namespace) that
// kumo applied: kumo's figure only, a check has no floor to compare with.
type driftResult struct {
	name         string
	n            int
	apply, check time.Duration
	// requests the apiserver served during the check, by "VERB resource"
	// (see apiRequests), for ConfigMaps and Namespaces.
	requests map[string]int
}

// timeDrift applies r's ConfigMaps with kumo, then times a drift check of
// them (client.CheckDrift: the DriftCheck workflow, warn mode) and counts the
// apiserver requests it made. The check must find every resource in sync.
// The objects are left in place: drift rows run last, on a cluster the bench
// throws away.
func timeDrift(ctx context.Context, home, project string, r row, settings runspec.RuntimeSettings, parallel int, cfg *rest.Config) (driftResult, error) {
	res := driftResult{name: r.name, n: r.n}
	k, err := startKumo(ctx, home, false)
	if err != nil {
		return res, err
	}
	defer k.close()
	if res.apply, _, err = k.run(ctx, project, benchspec.ConfigMaps(project, r.n, false), settings, parallel); err != nil {
		return res, fmt.Errorf("apply: %w", err)
	}
	before, err := apiRequests(ctx, cfg)
	if err != nil {
		return res, err
	}
	start := time.Now()
	rep, err := k.c.CheckDrift(ctx, client.DriftRequest{Project: project, Workspace: "default", Settings: settings, Parallelism: parallel})
	res.check = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("drift check: %w", err)
	}
	after, err := apiRequests(ctx, cfg)
	if err != nil {
		return res, err
	}
	if c := rep.Counts; c.Resources != r.n+1 || c.InSync != r.n+1 {
		return res, fmt.Errorf("drift check: %d resources, %d in sync; want %d in sync", c.Resources, c.InSync, r.n+1)
	}
	res.requests = map[string]int{}
	for key, v := range after {
		if d := v - before[key]; d > 0 {
			res.requests[key] = d
		}
	}
	return res, nil
}

// apiRequests reads the apiserver's request counters (apiserver_request_total
// from /metrics) for ConfigMaps and Namespaces, summed by "VERB resource",
// dry runs apart.
func apiRequests(ctx context.Context, cfg *rest.Config) (map[string]int, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("apiserver metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("apiserver metrics: %s: %s", resp.Status, body)
	}
	out := map[string]int{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		series, ok := strings.CutPrefix(s.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(series, "} ")
		if !ok {
			continue
		}
		resource, verb := label(labels, "resource"), label(labels, "verb")
		if resource != "configmaps" && resource != "namespaces" {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("apiserver metrics: %q: %w", s.Text(), err)
		}
		key := verb + " " + resource
		if label(labels, "dry_run") != "" {
			key += " (dry run)"
		}
		out[key] += int(v)
	}
	return out, s.Err()
}

// label is the value of name in a Prometheus label list (a="x",b="y").
func label(labels, name string) string {
	_, v, ok := strings.Cut(","+labels, ","+name+`="`)
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, `"`)
	return v
}

// requestsText lists requests sorted by kind, "GET configmaps 1001, ...".
func requestsText(req map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(req)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, req[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
