package release_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestReleaseRecordsPeople: Begin records the starter and hands the run the
// workspace's approval policy as stored in the backend; SetPhase and Finish
// add the approvers and the rejecter or canceller, never dropping one
// recorded before; the run's log names them; Audit appends entries once.
func TestReleaseRecordsPeople(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		rs := &runs{}
		m := release.New(b, nil, rs)
		policy := engine.ApprovalPolicy{Required: 2, Groups: []string{"sre"}, FourEyes: true}
		if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "w", Approval: policy}); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
		alice := engine.Actor{Name: "local:alice", Verified: true, Time: at}
		bob := engine.Actor{Name: "local:bob", Verified: true, Time: at.Add(time.Minute)}
		carol := engine.Actor{Name: "oidc:carol", Verified: true, Time: at.Add(2 * time.Minute)}
		rs.set("run-1", true)
		in := begin("p", "w", "run-1", putSpec(t, b, ns("a")))
		in.StartedBy = &alice
		info, err := m.Begin(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(info.Approval, policy) {
			t.Errorf("Begin's policy %+v, want the workspace's %+v", info.Approval, policy)
		}
		if err := m.SetPhase(ctx, info.Key, engine.PhaseApplying, engine.People{Approvals: []engine.Actor{bob, carol}}); err != nil {
			t.Fatal(err)
		}
		stop := engine.Actor{Name: "local:dan", Time: at.Add(3 * time.Minute), Reason: "wrong day"}
		// Finish with the canceller only: the approvals recorded stay.
		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseFailed, Error: "cancelled", People: engine.People{CancelledBy: &stop}}); err != nil {
			t.Fatal(err)
		}
		r := getRelease(t, b, 1)
		want := engine.People{StartedBy: &alice, Approvals: []engine.Actor{bob, carol}, CancelledBy: &stop}
		if !reflect.DeepEqual(r.People, want) {
			t.Errorf("release people %+v, want %+v", r.People, want)
		}
		log, err := b.RunLog(ctx, "run-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{
			"started by local:alice at 2026-11-25T18:00:00Z",
			"approved by local:bob at 2026-11-25T18:01:00Z",
			"approved by oidc:carol at 2026-11-25T18:02:00Z",
			"cancelled by local:dan (unverified) at 2026-11-25T18:03:00Z: wrong day",
		} {
			if !strings.Contains(string(log), line+"\n") {
				t.Errorf("run log %q lacks %q", log, line)
			}
		}
		e := backend.AuditEntry{ID: "run-1-1", Time: at, Subject: "local:bob", Verified: true, Action: "approve",
			Project: "p", Workspace: "w", Target: "kumo/p/w", Result: backend.AuditAllowed}
		for range 2 { // a retried step
			if err := m.Audit(ctx, []backend.AuditEntry{e}); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := b.ListAudit(ctx, backend.AuditFilter{Project: "p"}); err != nil || len(got) != 1 || got[0] != e {
			t.Errorf("audit %+v, %v; want %+v once", got, err, e)
		}
	})
}
