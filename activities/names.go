package activities

import (
	"go.temporal.io/sdk/activity"

	"github.com/kumoproj/kumo/runspec"
)

// Activity type names, as recorded in every run's history. They equal the
// method names the workflows pass to ExecuteActivity, which is how the SDK
// names a method; TestRegisteredNames keeps the two in step.
const (
	GenerateActivity            = "Generate"
	PlanGraphActivity           = "PlanGraph"
	CreateReleaseActivity       = "CreateRelease"
	SetReleasePhaseActivity     = "SetReleasePhase"
	FinishReleaseActivity       = "FinishRelease"
	LatestFinalRevisionActivity = "LatestFinalRevision"
	PreviewResourceActivity     = "PreviewResource"
	ApplyResourceActivity       = "ApplyResource"
	DeleteResourceActivity      = "DeleteResource"
	CompensateResourceActivity  = "CompensateResource"
	CheckDriftActivity          = "CheckDrift"
	RecordRemediationActivity   = "RecordRemediation"
	NotifyDriftActivity         = "NotifyDrift"
	WaitResourceActivity        = runspec.WaitResourceActivity
	WaitResourcesActivity       = runspec.WaitResourcesActivity
	ApplyResourcesActivity      = "ApplyResources"
	DeleteResourcesActivity     = "DeleteResources"
	PreviewResourcesActivity    = "PreviewResources"
	RecordedPreviewActivity     = "RecordedPreview"
	PlanPageActivity            = "PlanPage"
	PreviewNodeActivity         = "PreviewNode"
	RefreshResourcesActivity    = "RefreshResources"
	CompensateResourcesActivity = "CompensateResources"
	ReadStatusActivity          = "ReadStatus"
	EventSinksActivity          = "EventSinks"
	DeliverEventActivity        = "DeliverEvent"
	CheckPoliciesActivity       = "CheckPolicies"
	RecordSurgeryActivity       = "RecordSurgery"
	LatestSucceededActivity     = "LatestSucceeded"
	CheckSourceActivity         = "CheckSource"
	RecordSyncActivity          = "RecordSync"
	CollectGarbageActivity      = "CollectGarbage"
	RunHooksActivity            = "RunHooks"
	RunTestsActivity            = "RunTests"
)

// Registrar is what Register needs of a worker (or a test environment).
type Registrar interface {
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// Register adds every activity of a to r under its stable name.
func Register(r Registrar, a *Activities) {
	for name, fn := range a.byName() {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// byName maps each activity name to its method.
func (a *Activities) byName() map[string]any {
	return map[string]any{
		GenerateActivity:            a.Generate,
		PlanGraphActivity:           a.PlanGraph,
		CreateReleaseActivity:       a.CreateRelease,
		SetReleasePhaseActivity:     a.SetReleasePhase,
		FinishReleaseActivity:       a.FinishRelease,
		LatestFinalRevisionActivity: a.LatestFinalRevision,
		PreviewResourceActivity:     a.PreviewResource,
		ApplyResourceActivity:       a.ApplyResource,
		DeleteResourceActivity:      a.DeleteResource,
		CompensateResourceActivity:  a.CompensateResource,
		CheckDriftActivity:          a.CheckDrift,
		RecordRemediationActivity:   a.RecordRemediation,
		NotifyDriftActivity:         a.NotifyDrift,
		WaitResourceActivity:        a.WaitResource,
		WaitResourcesActivity:       a.WaitResources,
		ApplyResourcesActivity:      a.ApplyResources,
		DeleteResourcesActivity:     a.DeleteResources,
		PreviewResourcesActivity:    a.PreviewResources,
		RecordedPreviewActivity:     a.RecordedPreview,
		PlanPageActivity:            a.PlanPage,
		PreviewNodeActivity:         a.PreviewNode,
		RefreshResourcesActivity:    a.RefreshResources,
		CompensateResourcesActivity: a.CompensateResources,
		ReadStatusActivity:          a.ReadStatus,
		EventSinksActivity:          a.EventSinks,
		DeliverEventActivity:        a.DeliverEvent,
		LatestSucceededActivity:     a.LatestSucceeded,
		CheckPoliciesActivity:       a.CheckPolicies,
		RecordSurgeryActivity:       a.RecordSurgery,
		CheckSourceActivity:         a.CheckSource,
		RecordSyncActivity:          a.RecordSync,
		CollectGarbageActivity:      a.CollectGarbage,
		RunHooksActivity:            a.RunHooks,
		RunTestsActivity:            a.RunTests,
	}
}
