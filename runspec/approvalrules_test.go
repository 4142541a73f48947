package runspec

import (
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
)

func rules(p engine.ApprovalPolicy) ApprovalRules {
	return ApprovalRules{Policy: p, Project: "shop", Workspace: "prod", Run: "kumo/shop/prod",
		Starter: engine.Actor{Name: "local:alice", Verified: true}}
}

var (
	alice   = Subject{Name: "local:alice", Roles: []string{"deployer", "approver"}, Groups: []string{"sre"}, Verified: true}
	bob     = Subject{Name: "local:bob", Roles: []string{"approver"}, Groups: []string{"sre"}, Verified: true}
	carol   = Subject{Name: "oidc:carol", Roles: []string{"admin"}, Groups: []string{"dev"}, Verified: true}
	viewer  = Subject{Name: "local:vic", Roles: []string{"viewer"}, Groups: []string{"sre"}, Verified: true}
	forged  = Subject{Name: "local:bob", Roles: []string{"approver"}, Groups: []string{"sre"}} // not stamped
	nothing = Unverified("security-team@corp")
)

// TestApprovalRulesWithoutPolicy: a workspace without a policy keeps today's
// behaviour: anyone may answer, --yes is allowed.
func TestApprovalRulesWithoutPolicy(t *testing.T) {
	r := rules(engine.ApprovalPolicy{})
	for _, who := range []Subject{alice, nothing, viewer} {
		if err := r.MayAnswer(who, true, nil); err != nil {
			t.Errorf("%s approving: %v", who, err)
		}
	}
	if err := r.MayAutoApprove(nothing); err != nil {
		t.Errorf("--yes: %v", err)
	}
	if !r.Approved([]engine.Actor{{Name: "x"}}) || r.Approved(nil) {
		t.Error("one approval is enough, none is not")
	}
}

// TestApprovalRulesRefuse: each rule of a policy refuses with a message that
// names who, what, where and why.
func TestApprovalRulesRefuse(t *testing.T) {
	fourEyes := rules(engine.ApprovalPolicy{Required: 1, FourEyes: true})
	two := rules(engine.ApprovalPolicy{Required: 2, Groups: []string{"sre", "ops"}})
	bobApproved := []engine.Actor{bob.Actor(now(), "")}
	for _, c := range []struct {
		name    string
		err     error
		wantErr string
	}{
		{"four eyes, starter", fourEyes.MayAnswer(alice, true, nil),
			"local:alice may not approve shop/prod run kumo/shop/prod: four-eyes approval — the run was started by local:alice"},
		{"unverified", fourEyes.MayAnswer(forged, true, nil),
			"local:bob (unverified) may not approve shop/prod run kumo/shop/prod: the workspace requires approval by an authenticated subject"},
		{"client name", fourEyes.MayAnswer(nothing, false, nil), "security-team@corp (unverified) may not reject shop/prod"},
		{"no approver role", fourEyes.MayAnswer(viewer, true, nil), "local:vic may not approve shop/prod run kumo/shop/prod: the approver role is required (the subject's roles here: viewer)"},
		{"not in group", two.MayAnswer(carol, true, nil), "oidc:carol may not approve shop/prod run kumo/shop/prod: approvers must be in group sre or ops (the subject's groups: dev)"},
		{"twice", two.MayAnswer(bob, true, bobApproved), "local:bob may not approve shop/prod run kumo/shop/prod: local:bob already approved it; it needs 2 distinct approvers"},
		{"--yes four eyes", fourEyes.MayAutoApprove(alice), "local:alice may not auto-approve (--yes) shop/prod run kumo/shop/prod: four-eyes approval"},
		{"--yes two", two.MayAutoApprove(alice), "local:alice may not auto-approve (--yes) shop/prod run kumo/shop/prod: the workspace requires 2 distinct approvers"},
		{"--yes no role", rules(engine.ApprovalPolicy{Required: 1}).MayAutoApprove(Subject{Name: "local:dan", Roles: []string{"deployer"}, Verified: true}), "local:dan may not auto-approve (--yes) shop/prod run kumo/shop/prod: the approver role is required"},
		{"--yes unverified", rules(engine.ApprovalPolicy{Required: 1}).MayAutoApprove(Unverified("alice@host")), "alice@host (unverified) may not auto-approve"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.wantErr) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.wantErr)
		}
	}
}

// TestApprovalRulesAccept: the subjects a policy allows get through, a
// forged starter name does not make the starter someone else, and a rejection
// by the starter stands.
func TestApprovalRulesAccept(t *testing.T) {
	fourEyes := rules(engine.ApprovalPolicy{Required: 1, FourEyes: true})
	two := rules(engine.ApprovalPolicy{Required: 2, Groups: []string{"sre"}})
	for _, c := range []struct {
		name string
		err  error
	}{
		{"second subject", fourEyes.MayAnswer(bob, true, nil)},
		{"admin holds approver", rules(engine.ApprovalPolicy{Required: 1}).MayAnswer(carol, true, nil)},
		{"starter rejects", fourEyes.MayAnswer(alice, false, nil)},
		{"second of two", two.MayAnswer(alice, true, []engine.Actor{bob.Actor(now(), "")})},
		{"--yes by an approver", rules(engine.ApprovalPolicy{Required: 1}).MayAutoApprove(alice)},
	} {
		if c.err != nil {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
	// An unverified record of the same name is not that subject's approval.
	if err := two.MayAnswer(bob, true, []engine.Actor{{Name: "local:bob"}}); err != nil {
		t.Errorf("an unverified record blocks the subject: %v", err)
	}
	if two.Approved([]engine.Actor{bob.Actor(now(), "")}) || !two.Approved([]engine.Actor{bob.Actor(now(), ""), alice.Actor(now(), "")}) {
		t.Error("two approvals needed")
	}
}

func now() time.Time { return time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC) }
