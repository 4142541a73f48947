package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// TestUpdateAndRollbackRequests counts, with the apiserver's own counters,
// the requests an update of every ConfigMap and a rollback of them all send:
// one apply per object, and a constant few per run (see check).
//
// Not parallel: the counters are the whole apiserver's, and Go runs no
// parallel test of the package while a sequential one runs.
func TestUpdateAndRollbackRequests(t *testing.T) {
	e := newEnv(t)
	const n = 40
	values := func(v string) string {
		var cms []string
		for i := range n {
			cms = append(cms, fmt.Sprintf("cm-%02d", i), v)
		}
		return versioned(e.ns, cms...)
	}
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", values("1")))

	counted := []string{"configmaps", "namespaces", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"mutatingadmissionpolicies", "validatingadmissionpolicies", "selfsubjectaccessreviews"}
	count := func(what string, args ...string) localcluster.Requests {
		t.Helper()
		ctx := context.Background()
		before, err := e.cluster.Requests(ctx, counted...)
		if err != nil {
			t.Fatal(err)
		}
		out := e.ok(args...)
		after, err := e.cluster.Requests(ctx, counted...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.stdout, fmt.Sprintf("%d updated", n)) {
			t.Errorf("%s: want %d updated in:\n%s", what, n, out.stdout)
		}
		got := after.Since(before)
		t.Logf("%s of %d ConfigMaps: %s", what, n, got)
		return got
	}
	// The budget: one request per changed object, its apply; a ConfigMap
	// that only takes new values is previewed from the list of its
	// namespace, with no dry-run (the apiserver would store it as sent), and
	// never read alone. Per run, a constant few: the preview's lists (the
	// ConfigMaps, the Namespace, the admission webhooks and policies that
	// could change a ConfigMap update) and whether kumo may patch ConfigMaps
	// there (an access review): 7 when this was written, 12 allowed for the
	// cluster's own controllers. The Namespace, named and nothing else, is
	// known unchanged from its list: no dry-run.
	check := func(what string, got localcluster.Requests) {
		t.Helper()
		if got["APPLY configmaps"] != n {
			t.Errorf("%s: %s; want %d applies of ConfigMaps", what, got, n)
		}
		for _, k := range []string{"APPLY configmaps (dry run)", "GET configmaps", "PATCH configmaps", "UPDATE configmaps", "APPLY namespaces (dry run)"} {
			if got[k] != 0 {
				t.Errorf("%s: %s; want no %s", what, got, k)
			}
		}
		total := 0
		for _, v := range got {
			total += v
		}
		if budget := n + 12; total > budget {
			t.Errorf("%s: %d requests (%s), want at most %d (one per changed object and 12)", what, total, got, budget)
		}
	}
	check("update", count("update", "apply", "--yes", "-f", e.writeSpec("v2.yaml", values("2"))))
	check("rollback", count("rollback to revision 1", "rollback", "--yes", "--revision", "1"))
	if got := e.configMapData(); got["cm-00"] != "1" || got[fmt.Sprintf("cm-%02d", n-1)] != "1" || len(got) != n {
		t.Errorf("after the rollback: %v, want %d ConfigMaps at 1", got, n)
	}
}
