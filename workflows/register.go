package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kumoproj/kumo/runspec"
)

// Register adds kumo's workflows to a worker (or a test environment) under their
// stable type names.
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(Generate, workflow.RegisterOptions{Name: runspec.GenerateWorkflow})
	r.RegisterWorkflowWithOptions(Preview, workflow.RegisterOptions{Name: runspec.PreviewWorkflow})
	r.RegisterWorkflowWithOptions(Apply, workflow.RegisterOptions{Name: runspec.ApplyWorkflow})
	r.RegisterWorkflowWithOptions(Destroy, workflow.RegisterOptions{Name: runspec.DestroyWorkflow})
	r.RegisterWorkflowWithOptions(Rollback, workflow.RegisterOptions{Name: runspec.RollbackWorkflow})
	r.RegisterWorkflowWithOptions(Refresh, workflow.RegisterOptions{Name: runspec.RefreshWorkflow})
	r.RegisterWorkflowWithOptions(Forget, workflow.RegisterOptions{Name: runspec.ForgetWorkflow})
	r.RegisterWorkflowWithOptions(Move, workflow.RegisterOptions{Name: runspec.MoveWorkflow})
	r.RegisterWorkflowWithOptions(DriftCheck, workflow.RegisterOptions{Name: runspec.DriftWorkflow})
	r.RegisterWorkflowWithOptions(Remediate, workflow.RegisterOptions{Name: runspec.RemediateWorkflow})
	r.RegisterWorkflowWithOptions(StackStatus, workflow.RegisterOptions{Name: runspec.StatusWorkflow})
	r.RegisterWorkflowWithOptions(Rollout, workflow.RegisterOptions{Name: runspec.RolloutWorkflow})
	r.RegisterWorkflowWithOptions(SourceSync, workflow.RegisterOptions{Name: runspec.SyncWorkflow})
	r.RegisterWorkflowWithOptions(BackendGC, workflow.RegisterOptions{Name: runspec.GCWorkflow})
	r.RegisterWorkflowWithOptions(Queue, workflow.RegisterOptions{Name: runspec.QueueWorkflow})
	r.RegisterWorkflowWithOptions(Test, workflow.RegisterOptions{Name: runspec.TestWorkflow})
}
