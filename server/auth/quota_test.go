package auth

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/runspec"
)

// TestStartQuota: a subject's starts beyond its quota are refused with
// ResourceExhausted, naming it and the limit, and audited; the starter is
// stamped on the run (replacing a forged value) so its runs in flight can be
// counted; until the server can count, a quota of runs in flight refuses
// (fails closed); the owner is not limited.
func TestStartQuota(t *testing.T) {
	f := newFixture(t)
	policy := f.i.policy
	i, err := New(Config{PKI: f.home, Policy: policy, Auditor: f.audit, Quota: authz.Quota{StartsPerMinute: 2, InFlight: 3}})
	if err != nil {
		t.Fatal(err)
	}
	bob := f.as(t, "bob")
	m := wfs + "StartWorkflowExecution"
	apply := func(ctx context.Context) error {
		return i.authorize(ctx, m, start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue))
	}
	if err := apply(bob); code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "cannot count runs yet") {
		t.Fatalf("start before the server counts runs: %v, want FailedPrecondition", err)
	}
	running := map[string]int{}
	i.SetInFlightCounter(func(_ context.Context, s string) (int, error) { return running[s], nil })

	req := start("kumo/shop/dev", runspec.ApplyWorkflow, runspec.TaskQueue)
	req.SearchAttributes = nil
	if err := i.authorize(bob, m, req); err != nil {
		t.Fatalf("first start: %v", err)
	}
	var starter string
	if err := json.Unmarshal(req.GetSearchAttributes().GetIndexedFields()[runspec.AttrStartedBy].GetData(), &starter); err != nil || starter != "bob" {
		t.Errorf("starter stamped %q (%v), want bob", starter, err)
	}
	if err := apply(bob); err != nil {
		t.Fatalf("second start: %v", err)
	}
	err = apply(bob)
	if code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "bob has reached its quota of 2 starts per minute") {
		t.Fatalf("third start in a minute: %v", err)
	}
	last := f.audit.entries[len(f.audit.entries)-1]
	if last.Subject != "bob" || last.Allowed || !strings.Contains(last.Reason, "quota") {
		t.Errorf("quota refusal audited as %+v", last)
	}

	running["carol"] = 3
	carol := f.as(t, "carol")
	policy.Grants = append(policy.Grants, authz.Grant{Role: authz.Deployer, Subjects: []string{"carol"}, Scopes: []authz.Scope{authz.Everywhere}})
	if err := apply(carol); code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "3 runs in flight") {
		t.Fatalf("start with 3 runs in flight: %v", err)
	}
	running[f.home.Owner()] = 1000
	for range 5 {
		if err := apply(f.owner(t)); err != nil {
			t.Fatalf("the owner is limited: %v", err)
		}
	}
}

func TestInFlightQuery(t *testing.T) {
	q, err := InFlightQuery("token:ci")
	if err != nil || q != "KumoStartedBy = 'token:ci' AND ExecutionStatus = 'Running' AND WorkflowType != 'Queue'" {
		t.Errorf("query %q, %v", q, err)
	}
	for _, bad := range []string{"o'brien", `a\b`, `x"y`} {
		if _, err := InFlightQuery(bad); err == nil {
			t.Errorf("subject %q made a query", bad)
		}
	}
}
