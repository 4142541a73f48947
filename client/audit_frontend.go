package client

import (
	"context"
	"log/slog"

	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/auth"
)

// frontendAuditor is the AuditLog as the frontend's interceptor takes it
// (auth.Auditor): every write it allows or denies, with the authenticated
// subject.
type frontendAuditor struct {
	log    *AuditLog
	logger *slog.Logger
}

// FrontendAuditor is the auditor of the kumo frontend this client starts or
// serves: its decisions go to this client's backend's audit log.
func (c *Client) FrontendAuditor() auth.Auditor {
	return frontendAuditor{log: c.AuditLog(), logger: c.opts.Logger}
}

func (a frontendAuditor) Record(ctx context.Context, e auth.Entry) {
	entry := runspec.AuditEntry{
		Time: e.Time, Subject: runspec.Subject{Name: e.Subject, Verified: true}, Action: string(e.Action),
		Project: e.Project, Workspace: e.Workspace, Target: e.Target, Allowed: e.Allowed, Reason: e.Reason,
	}
	// The request is not held up by its record's write failing: the
	// decision stands, and the failure is logged where the server logs.
	if err := a.log.Audit(context.WithoutCancel(ctx), entry); err != nil {
		a.logger.Error("audit log: cannot record a frontend decision", "subject", e.Subject, "action", e.Action, "target", e.Target, "allowed", e.Allowed, "error", err)
	}
}
