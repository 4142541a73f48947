package workflows

import (
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// joinTargets is the plan step's form of a run's --target addresses: sorted,
// without duplicates, one per line (release.JoinTargets, which the workflow
// cannot import).
func joinTargets(targets []string) string {
	ts := slices.Clone(targets)
	slices.Sort(ts)
	return strings.Join(slices.Compact(ts), "\n")
}

// checkProtectedOverride refuses, before anything is planned, a run started
// with AllowProtectedDelete by anyone but a verified admin of its
// project/workspace: the roles are those the kumo frontend stamped on the
// start (SubjectHeader), never what the client says. The refusal is audited.
func (r *run) checkProtectedOverride(ctx workflow.Context) error {
	if !r.in.AllowProtectedDelete {
		return nil
	}
	if err := runspec.MayDeleteProtected(r.starter, r.in.Project, r.in.Workspace); err != nil {
		r.audit(ctx, r.starter, "allow-protected-delete", false, err.Error())
		return err
	}
	r.audit(ctx, r.starter, "allow-protected-delete", true, "--allow-protected-delete")
	return nil
}
