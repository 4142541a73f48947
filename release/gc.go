package release

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/runspec"
)

// GCPolicy turns a collection's input into the backend's policy.
func GCPolicy(in runspec.GCInput) backend.GCPolicy {
	return backend.GCPolicy{RunLogs: in.RunLogs, DriftReports: in.DriftReports, Requests: in.Requests, Audit: in.Audit, Grace: in.Grace, Releases: in.Releases}
}

// GCResultOf is the counts of a collection's report.
func GCResultOf(r backend.GCReport) runspec.GCResult {
	return runspec.GCResult{Specs: r.Specs, Chunks: r.Chunks, StateDirs: r.StateDirs, RunLogs: r.RunLogs, DriftReports: r.DriftReports,
		Requests: r.Requests, AuditDays: r.AuditDays, Bytes: r.Bytes, Restored: len(r.Restored), Waiting: r.Waiting, Releases: r.Releases,
		Revisions: r.Revisions, PrunedWorkspaces: len(r.Pruned)}
}

// CollectGarbage removes from the Manager's backend what in's policy says
// has expired or is unreferenced (backend.Collect), as of now, and logs what
// it removed. A backend that is not a record store (a test double) is an
// error, not a collection that does nothing.
func (m *Manager) CollectGarbage(ctx context.Context, in runspec.GCInput, now time.Time) (backend.GCReport, error) {
	rs, ok := m.backend.(interface{ RecordStore() *backend.Store })
	if !ok {
		return backend.GCReport{}, fmt.Errorf("collect garbage: backend %T keeps no records kumo can collect", m.backend)
	}
	queued, err := m.runs.QueuedSpecs(ctx)
	if err != nil {
		return backend.GCReport{}, fmt.Errorf("collect garbage: the specs of queued runs, which it must keep: %w", err)
	}
	rep, err := backend.Collect(ctx, rs.RecordStore(), GCPolicy(in), now, in.DryRun, queued...)
	if err != nil {
		return rep, fmt.Errorf("collect garbage: %w", err)
	}
	verb := "removed"
	if in.DryRun {
		verb = "would remove"
	}
	for _, k := range rep.Removed {
		slog.Info("kumo gc: "+verb, "key", k)
	}
	for _, k := range rep.Restored {
		slog.Info("kumo gc: wrote back (a release written meanwhile names it)", "key", k)
	}
	for _, p := range rep.Pruned {
		slog.Info("kumo gc: "+verb+" release revisions past the history limit", "project", p.Project, "workspace", p.Workspace,
			"revisions", p.Ranges(), "oldestKept", p.Floor)
	}
	return rep, nil
}
