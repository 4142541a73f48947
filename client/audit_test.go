package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestAuditLog: the adapter the kumo frontend's authorization is given
// (AuditLog) appends its decisions to the backend's log, allowed and denied,
// with the subject; workspace changes the client makes in the backend itself
// are appended under its own name, unverified; a change that failed is not;
// Audit filters by project, workspace and time.
func TestAuditLog(t *testing.T) {
	ctx := context.Background()
	c, err := client.Open(client.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	before := time.Now().Add(-time.Second)
	denied := runspec.AuditEntry{Time: before.Add(-time.Hour), Subject: runspec.Subject{Name: "oidc:vic", Verified: true}, Action: "start apply",
		Project: "shop", Workspace: "prod", Target: "kumo/shop/prod", Reason: "oidc:vic may not start apply in shop/prod: the deployer role is required"}
	allowed := runspec.AuditEntry{Subject: runspec.Subject{Name: "local:alice", Verified: true}, Action: "approve",
		Project: "shop", Workspace: "dev", Target: "kumo/shop/dev", Allowed: true}
	for _, e := range []runspec.AuditEntry{denied, allowed} {
		if err := c.AuditLog().Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateWorkspace(ctx, &engine.Workspace{Name: "prod", Approval: engine.ApprovalPolicy{Required: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateWorkspace(ctx, &engine.Workspace{Name: "prod"}); err == nil {
		t.Fatal("created workspace prod twice")
	}
	if err := c.DeleteWorkspace(ctx, "prod", false); err != nil {
		t.Fatal(err)
	}
	show := func(f client.AuditFilter) string {
		t.Helper()
		es, err := c.Audit(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprintf("%s %s %s/%s %s %s", engine.DisplayName(e.Subject, e.Verified), e.Action, e.Project, e.Workspace, e.Target, e.Result))
		}
		return strings.Join(out, "; ")
	}
	own, err := c.Audit(ctx, client.AuditFilter{Workspace: "prod", Since: before})
	if err != nil || len(own) == 0 || own[0].Subject == "" || own[0].Verified {
		t.Fatalf("the client's own entries: %+v, %v", own, err)
	}
	me := own[0].Subject // user@host
	for _, tc := range []struct {
		f    client.AuditFilter
		want string
	}{
		{client.AuditFilter{}, "oidc:vic start apply shop/prod kumo/shop/prod denied; local:alice approve shop/dev kumo/shop/dev allowed; " +
			me + " (unverified) workspace create /prod workspace prod allowed; " + me + " (unverified) workspace delete /prod workspace prod allowed"},
		{client.AuditFilter{Project: "shop"}, "oidc:vic start apply shop/prod kumo/shop/prod denied; local:alice approve shop/dev kumo/shop/dev allowed"},
		{client.AuditFilter{Project: "shop", Since: before}, "local:alice approve shop/dev kumo/shop/dev allowed"},
	} {
		if got := show(tc.f); got != tc.want {
			t.Errorf("Audit(%+v):\n got  %s\n want %s", tc.f, got, tc.want)
		}
	}
}
