package backend

import "github.com/kumoproj/kumo/engine"

// The release history limit (GCPolicy.Releases): how many revisions of each
// project/workspace a collection keeps, decided here as a plain function of
// the revisions found, so that it is tested without any storage.
//
// What is kept is always a run of revisions from the workspace's floor (the
// oldest kept revision, store_floor.go) to the latest, so that the store's
// readers stay gapless from the floor. The floor only rises, and never above:
//   - the newest keep revisions (keep is at least MinReleaseRetention, so the
//     latest and the one before it, the prior of a run in flight, stay);
//   - the newest succeeded revision that is not a destroy, which a rollback
//     without --revision and a rollout's undo restore (Helm likewise keeps the
//     last deployed release whatever its history limit), and the newest
//     succeeded one of any operation, which a drift check and a test read;
//   - the prior revision of any release that is not final, whose run may
//     still read it.

// MinReleaseRetention is the smallest history limit other than 0 (keep every
// revision): the latest revision and the one before it always stay.
const MinReleaseRetention = 2

// revisionHead is what the history limit decides on for one revision.
type revisionHead struct {
	Revision  int
	Phase     engine.Phase
	Operation engine.Operation
}

// historyFloor returns the oldest revision to keep of a workspace whose kept
// revisions are revs (ascending, the latest last) and whose floor is floor,
// under a limit of keep revisions (0: every revision). It never returns less
// than floor.
func historyFloor(revs []revisionHead, floor, keep int) int {
	if keep <= 0 || len(revs) == 0 {
		return floor
	}
	latest := revs[len(revs)-1].Revision
	f := latest - max(keep, MinReleaseRetention) + 1
	for _, r := range revs {
		if !r.Phase.Final() {
			f = min(f, r.Revision-1)
		}
	}
	succeeded := func(destroyToo bool) {
		for i := len(revs) - 1; i >= 0; i-- {
			if r := revs[i]; r.Phase == engine.PhaseSucceeded && (destroyToo || r.Operation != engine.OperationDestroy) {
				f = min(f, r.Revision)
				return
			}
		}
	}
	succeeded(false)
	succeeded(true)
	return max(f, floor, 1)
}

// belowFloor returns the revisions of present (any order) under floor: the
// ones a collection removes.
func belowFloor(present []int, floor int) []int {
	var out []int
	for _, r := range present {
		if r < floor {
			out = append(out, r)
		}
	}
	return out
}
