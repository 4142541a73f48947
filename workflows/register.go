package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// Register adds kumo's workflows to a worker (or a test environment) under their
// stable type names.
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(Generate, workflow.RegisterOptions{Name: GenerateWorkflow})
	r.RegisterWorkflowWithOptions(Preview, workflow.RegisterOptions{Name: PreviewWorkflow})
	r.RegisterWorkflowWithOptions(Apply, workflow.RegisterOptions{Name: ApplyWorkflow})
	r.RegisterWorkflowWithOptions(Destroy, workflow.RegisterOptions{Name: DestroyWorkflow})
	r.RegisterWorkflowWithOptions(Rollback, workflow.RegisterOptions{Name: RollbackWorkflow})
	r.RegisterWorkflowWithOptions(DriftCheck, workflow.RegisterOptions{Name: DriftWorkflow})
	r.RegisterWorkflowWithOptions(Remediate, workflow.RegisterOptions{Name: RemediateWorkflow})
}
