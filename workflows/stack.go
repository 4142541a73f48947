package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// checkStack refuses a run whose input names another stack than its workflow
// ID. The frontend authorizes a start by the ID's project and workspace (the
// input is encrypted, so it cannot read it): without this check, a deployer
// of shop/dev could start kumo/shop/dev with shop/prod in its input. An ID of
// no kumo form (tests, a cluster without kumo's frontend) names no stack to
// compare with.
func checkStack(ctx workflow.Context, project, workspace string) error {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	p, w, ok := runspec.StackOfWorkflowID(id)
	if !ok || (p == project && w == workspace) {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("workflow %s is for %s/%s but its input names %s/%s: refused", id, p, w, project, workspace),
		"StackMismatch", nil)
}
