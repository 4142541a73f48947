package release

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/backend"
)

// Audit appends entries to the backend's audit log. Each is appended even if
// another fails; appending one again (same ID and time) adds nothing, so a
// retried step may send them all again.
func (m *Manager) Audit(ctx context.Context, entries []backend.AuditEntry) error {
	var errs []error
	for _, e := range entries {
		errs = append(errs, m.backend.AppendAudit(ctx, e))
	}
	return errors.Join(errs...)
}
