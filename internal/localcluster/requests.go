package localcluster

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
)

// Requests counts the requests the apiserver served, from its own counters
// (apiserver_request_total on /metrics), by "VERB resource" ("APPLY
// configmaps", "LIST configmaps"); a dry run is counted apart, as "VERB
// resource (dry run)". The apiserver counts since its start: take two and
// Since to count what happened in between.
type Requests map[string]int

// Requests reads the apiserver's request counters of resources (plural
// names: "configmaps", "namespaces"); none named: every resource.
func (c *Cluster) Requests(ctx context.Context, resources ...string) (Requests, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	c.authorize(req)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("apiserver metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("apiserver metrics: %s: %s", resp.Status, body)
	}
	return parseRequests(resp.Body, resources)
}

// parseRequests sums the apiserver_request_total series of the Prometheus
// text in r by "VERB resource", dry runs apart, for resources (none: all).
func parseRequests(r io.Reader, resources []string) (Requests, error) {
	out := Requests{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		series, ok := strings.CutPrefix(s.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(series, "} ")
		if !ok {
			return nil, fmt.Errorf("apiserver metrics: no value in %q", s.Text())
		}
		resource, verb := label(labels, "resource"), label(labels, "verb")
		if len(resources) > 0 && !slices.Contains(resources, resource) {
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
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("apiserver metrics: %w", err)
	}
	return out, nil
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

// Since is what the counters grew by from before to r: the requests served
// in between (the keys that grew).
func (r Requests) Since(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// String lists the counts sorted by key: "APPLY configmaps 200, LIST configmaps 1".
func (r Requests) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, r[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
