package release_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/planpolicy"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/release"
)

// TestCheckPoliciesSeesDesiredLiveAndPaths: the operator's and the stored
// workspace's rules see an update's live object, desired object and changed
// paths, a delete's live object (and no desired one), a create's desired
// object (and no live one); a stored rule that does not compile fails the
// check instead of being skipped.
func TestCheckPoliciesSeesDesiredLiveAndPaths(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) { checkPolicies(t, b) })
}

func checkPolicies(t *testing.T, b backend.Backend) {
	m := release.New(b, &listingRuntime{Runtime: memory.New()}, &runs{})
	keep, drop := cm("keep", "1"), cm("drop", "1")
	first := started(t, b, m, keep, drop)
	for _, r := range []engine.Resource{keep, drop} {
		if _, err := m.Apply(ctx, first(r.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Finish(ctx, release.FinishInput{Key: first(keep.ID).Key, Phase: engine.PhaseSucceeded}); err != nil {
		t.Fatal(err)
	}
	server, err := planpolicy.Compile([]planpolicy.Rule{{Name: "server-create", Match: planpolicy.Selector{Actions: []string{planpolicy.ActionCreate}},
		Expression: `!(live == null && desired.data.v == "n")`, Message: "saw a create", Effect: planpolicy.Warn}}, "operator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.SetPolicies(server)
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "w", Policies: []planpolicy.Rule{
		{Name: "update", Match: planpolicy.Selector{Actions: []string{planpolicy.ActionUpdate}},
			Expression: `!(live.data.v == "1" && desired.data.v == "2" && "data.v" in paths)`, Message: "saw an update", Effect: planpolicy.Warn},
		{Name: "delete", Match: planpolicy.Selector{Kinds: []string{"ConfigMap"}, Actions: []string{planpolicy.ActionDelete}},
			Expression: `!(desired == null && live.metadata.name == "drop")`, Message: "saw a delete", Effect: planpolicy.Deny},
	}}); err != nil {
		t.Fatal(err)
	}
	keep2, added := cm("keep", "2"), cm("added", "n")
	info, err := m.Begin(ctx, begin("p", "w", "run-2", putSpec(t, b, keep2, added)))
	if err != nil {
		t.Fatal(err)
	}
	node := nodes(info)
	changes := []release.PolicyChange{
		{Node: node(keep.ID), Type: engine.Kubernetes, Action: engine.Update, Paths: []string{"data.v"}},
		{Node: withDelete(node(drop.ID)), Type: engine.Kubernetes, Action: engine.Delete},
		{Node: node(added.ID), Type: engine.Kubernetes, Action: engine.Create},
	}
	res, err := m.CheckPolicies(ctx, "w", changes, "run-2")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range res.Violations {
		got[v.Rule] = v.Resource
		if !strings.HasPrefix(v.Message, "saw ") || strings.Contains(v.Message, "could not be evaluated") {
			t.Errorf("rule %s: %q, want its message alone (an expression that failed would violate it too)", v.Rule, v.Message)
		}
	}
	want := map[string]string{"server-create": added.ID, "update": keep.ID, "delete": drop.ID}
	if len(got) != len(want) {
		t.Fatalf("violations %+v, want %v", res.Violations, want)
	}
	for rule, id := range want {
		if got[rule] != id {
			t.Errorf("rule %s: violated by %q, want %s (violations %+v)", rule, got[rule], id, res.Violations)
		}
	}
	var denied *planpolicy.DeniedError
	if err := res.Denied(); !errors.As(err, &denied) || !strings.Contains(err.Error(), drop.ID+": rule delete: saw a delete") {
		t.Errorf("Denied() = %v", err)
	}

	// A stored rule that does not compile (written around ParseWorkspace)
	// fails the check, naming the workspace and the rule.
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "w", Policies: []planpolicy.Rule{
		{Name: "broken", Expression: "live.", Message: "m", Effect: planpolicy.Deny}}}); err != nil {
		t.Fatal(err)
	}
	_, err = m.CheckPolicies(ctx, "w", changes, "run-2")
	if !errors.Is(err, release.ErrInvalid) || !strings.Contains(err.Error(), `workspace w: policies[0] "broken"`) {
		t.Errorf("CheckPolicies with a broken stored rule = %v", err)
	}
}

func withDelete(n release.Node) release.Node {
	n.Delete = true
	return n
}
