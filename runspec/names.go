package runspec

// TaskQueue is where every kumo workflow and activity runs.
const TaskQueue = "kumo"

// Workflow type names, as they appear in the Temporal Web UI.
const (
	GenerateWorkflow = "Generate"
	PreviewWorkflow  = "Preview"
	ApplyWorkflow    = "Apply"
	DestroyWorkflow  = "Destroy"
	RollbackWorkflow = "Rollback"
	// RefreshWorkflow records what is live as a revision, changing nothing.
	RefreshWorkflow = "Refresh"
	// ForgetWorkflow and MoveWorkflow change what the latest release records
	// (kumo release forget, kumo release mv), nothing live.
	ForgetWorkflow = "Forget"
	MoveWorkflow   = "Move"
	DriftWorkflow  = "DriftCheck"
	// RemediateWorkflow is the workflow type of a remediation.
	RemediateWorkflow = "Remediate"
	// StatusWorkflow reads a stack's live status through its workspace's task
	// queue (see StatusInput).
	StatusWorkflow = "StackStatus"
)

// Signal, query and update names, and the memo key runs keep their counts in.
const (
	// ApprovalSignal carries an Approval: how runs older than ApproveUpdate
	// took the go-ahead after preview. Kept for them.
	ApprovalSignal = "approval"
	// ApproveUpdate is the Update that answers a run awaiting approval: it
	// takes an ApprovalRequest and returns an ApprovalAnswer. Its validator
	// refuses it, so the caller learns at once, when the run is not awaiting
	// approval, has been answered, or the request's digest does not name the
	// plan awaiting approval.
	ApproveUpdate = "approve"
	// ProgressQuery returns a Progress.
	ProgressQuery = "progress"
	// ProgressPageQuery answers a ProgressRequest with a ProgressPage: the
	// run's progress a page at a time, and only the resources that changed
	// since the asker's last look. A run of tens of thousands of resources
	// outgrows one answer of ProgressQuery (every node and change, every
	// time), and a client following a run asks several times a second.
	ProgressPageQuery = "progress-page"
	// CancelSignal carries a Cancel: the reason, sent just before Temporal's
	// cancel request.
	CancelSignal = "cancel"
	// ChangesMemo is the memo field holding a run's ChangeCounts.
	ChangesMemo = "kumoChanges"
)
