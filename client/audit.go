package client

import (
	"context"
	"fmt"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/runspec"
)

// The audit log lives in the backend (backend.Backend.AppendAudit), so a
// deployment on S3 keeps it with its releases. Three kinds of writers append
// to it, each for what only it sees:
//
//   - the kumo frontend (its authorization interceptor), through AuditLog:
//     every request it allows or denies, including the approvals, rejections
//     and cancels a run's update validator refuses (a refused update leaves
//     no trace in the run's history; the frontend sees the refusal in the
//     update's response);
//   - the runs themselves, through their release steps (workflows): the
//     approvals, rejections, --yes and cancels they accepted or refused, with
//     the authenticated subject, appended by an activity, so no client can
//     leave them out;
//   - the client, for what it does to the backend directly, without Temporal
//     (workspace changes, unlocking a release): the client's own name,
//     unverified, since no server authenticated it.

// AuditLog appends the kumo frontend's decisions to the backend's audit log:
// the adapter the frontend's authorization interceptor is given as its
// Auditor.
type AuditLog struct{ b backend.Backend }

// NewAuditLog returns the audit log kept in b.
func NewAuditLog(b backend.Backend) *AuditLog { return &AuditLog{b: b} }

// AuditLog is the audit log of the client's backend.
func (c *Client) AuditLog() *AuditLog { return NewAuditLog(c.backend) }

// Audit appends one decision. An entry without a time is stamped now.
func (a *AuditLog) Audit(ctx context.Context, e runspec.AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	res := backend.AuditDenied
	if e.Allowed {
		res = backend.AuditAllowed
	}
	name := e.Subject.Name
	if name == "" {
		name = "anonymous"
	}
	return a.b.AppendAudit(ctx, backend.AuditEntry{Time: e.Time.UTC(), Subject: name, Verified: e.Subject.Verified,
		Action: e.Action, Project: e.Project, Workspace: e.Workspace, Target: e.Target, Result: res, Reason: e.Reason})
}

// AuditFilter selects audit entries for Audit.
type AuditFilter = backend.AuditFilter

// AuditRecord is one entry of the audit log as stored.
type AuditRecord = backend.AuditEntry

// Audit lists the audit log's entries f selects, oldest first.
func (c *Client) Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	return c.backend.ListAudit(ctx, f)
}

// auditOwn appends what this client did to the backend itself, under the
// client's own name (unverified: no server vouched for it), once it is done:
// a change that failed changed nothing, and refusing it was no one's
// decision. Failing to record a change is reported with it.
func (c *Client) auditOwn(ctx context.Context, action, project, workspace, target string, err error) error {
	if err != nil {
		return err
	}
	e := runspec.AuditEntry{Subject: runspec.Unverified(startedBy()), Action: action, Project: project,
		Workspace: workspace, Target: target, Allowed: true}
	if aerr := c.AuditLog().Audit(ctx, e); aerr != nil {
		return fmt.Errorf("%s of %s done, but not recorded in the audit log: %w", action, target, aerr)
	}
	return nil
}

// AuditTokenChange records a token's creation or revocation (action "token
// create" or "token revoke", target "token <id> for <subject>") made on this
// home, once it is done.
func (c *Client) AuditTokenChange(ctx context.Context, action, target string, err error) error {
	return c.auditOwn(ctx, action, "", "", target, err)
}
