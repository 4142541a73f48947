package workflows

import (
	"testing"

	"go.temporal.io/sdk/workflow"
)

// TestShapedVersionsAreFixed: a run recorded with shapeChange's marker takes
// each shaped change at the version it had then, for as long as the run is
// kept; a change of one of them needs a new change ID instead of a new
// version of the old one.
func TestShapedVersionsAreFixed(t *testing.T) {
	for change, newest := range map[string]workflow.Version{
		statusChange: statusVersion, runtimeQueueChange: runtimeQueueVersion, planPagesChange: planPagesVersion,
		previewRefreshChange: previewRefreshVersion, batchPreviewChange: batchPreviewVersion, approvalChange: approvalVersion,
		waitChange: waitVersion, localNodeChange: localNodeVersion, localYieldChange: localYieldVersion,
		batchChange: batchVersion, chainChange: chainVersion, waitBatchChange: waitBatchVersion,
		compensateChange: compensateVersion, driftRemediateChange: driftRemediateVersion, unchangedWaitChange: unchangedWaitVersion,
		eventsChange: eventsVersion, driftSinksChange: driftSinksVersion, planPoliciesChange: planPoliciesVersion,
		appliedEdgesChange: appliedEdgesVersion, surgeryChange: surgeryVersion, hooksChange: hooksVersion,
		localReleaseChange: localReleaseVersion, localDriftChange: localDriftVersion, localPreviewChange: localPreviewVersion,
		localBatchChange: localBatchVersion,
	} {
		if v, ok := shaped[change]; !ok || v != newest {
			t.Errorf("%s: newest version %d, shaped at %d (in shaped: %v): a run recorded with %s's marker replays it at its shaped version; give the new code a new change ID",
				change, newest, v, ok, shapeChange)
		}
	}
	for change, since := range map[string]struct {
		shape, newest workflow.Version
	}{poolChange: {2, poolVersion}, recordedReadsChange: {3, recordedReadsVersion}} {
		if v, ok := shapedSince[since.shape][change]; !ok || v != since.newest {
			t.Errorf("%s: newest version %d, shaped since version %d at %d (in shapedSince: %v); give the new code a new change ID",
				change, since.newest, since.shape, v, ok)
		}
	}
	if _, ok := shapedSince[shapeVersion]; !ok && shapeVersion > 1 {
		t.Errorf("%s's newest version %d takes no change in (shapedSince)", shapeChange, shapeVersion)
	}
	for since, changes := range shapedSince {
		for change := range changes {
			if _, ok := shaped[change]; ok {
				t.Errorf("%s is in shaped and in shapedSince[%d]: a change is taken in by one version", change, since)
			}
			for other, more := range shapedSince {
				if _, ok := more[change]; ok && other != since {
					t.Errorf("%s is in shapedSince[%d] and [%d]: a change is taken in by one version", change, since, other)
				}
			}
		}
	}
}
