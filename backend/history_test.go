package backend

import (
	"slices"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// history makes revisions from..from+len(phases)-1 with these phases, each an
// apply unless ops names another operation for it.
func history(from int, phases string, ops map[int]engine.Operation) []revisionHead {
	byLetter := map[rune]engine.Phase{'s': engine.PhaseSucceeded, 'f': engine.PhaseFailed, 'a': engine.PhaseApplying}
	var out []revisionHead
	for i, c := range phases {
		rev := from + i
		op := engine.OperationApply
		if o, ok := ops[rev]; ok {
			op = o
		}
		out = append(out, revisionHead{Revision: rev, Phase: byLetter[c], Operation: op})
	}
	return out
}

func TestHistoryFloor(t *testing.T) {
	for name, tc := range map[string]struct {
		revs        []revisionHead
		floor, keep int
		want        int
	}{
		"no limit":                        {history(1, "ssssssssss", nil), 1, 0, 1},
		"no revisions":                    {nil, 1, 3, 1},
		"fewer than the limit":            {history(1, "ss", nil), 1, 3, 1},
		"as many as the limit":            {history(1, "sss", nil), 1, 3, 1},
		"newest three of ten":             {history(1, "ssssssssss", nil), 1, 3, 8},
		"from an earlier floor":           {history(8, "sssss", nil), 8, 3, 10},
		"never lowered":                   {history(8, "sss", nil), 8, 5, 8},
		"a limit under the minimum":       {history(1, "sssss", nil), 1, 1, 4},
		"the last success stays":          {history(1, "ssffff", nil), 1, 2, 2},
		"a destroy is no success":         {history(1, "sssff", map[int]engine.Operation{3: engine.OperationDestroy}), 1, 2, 2},
		"a rollback is one":               {history(1, "sssff", map[int]engine.Operation{3: engine.OperationRollback}), 1, 2, 3},
		"no success at all":               {history(1, "fffff", nil), 1, 2, 4},
		"only a destroy succeeded":        {history(1, "fsfff", map[int]engine.Operation{2: engine.OperationDestroy}), 1, 2, 2},
		"a run in flight keeps its prior": {history(1, "ssssasss", nil), 1, 2, 4},
		"a running latest":                {history(1, "ssssa", nil), 1, 2, 4},
		"never under 1":                   {history(1, "asss", nil), 1, 2, 1},
	} {
		if got := historyFloor(tc.revs, tc.floor, tc.keep); got != tc.want {
			t.Errorf("%s: historyFloor(floor %d, keep %d) = %d, want %d", name, tc.floor, tc.keep, got, tc.want)
		}
	}
}

func TestBelowFloor(t *testing.T) {
	if got := belowFloor([]int{5, 1, 7, 2, 6}, 6); !slices.Equal(got, []int{5, 1, 2}) {
		t.Errorf("belowFloor: %v", got)
	}
	if got := belowFloor([]int{3, 4}, 3); got != nil {
		t.Errorf("nothing under the floor: %v", got)
	}
}

func TestPrunedRanges(t *testing.T) {
	for _, tc := range []struct {
		revs []int
		want string
	}{
		{nil, ""},
		{[]int{4}, "4"},
		{[]int{1, 2, 3, 4, 5, 6, 7}, "1-7"},
		{[]int{5, 1, 2, 3, 9, 10}, "1-3, 5, 9-10"},
	} {
		if got := (PrunedReleases{Revisions: tc.revs}).Ranges(); got != tc.want {
			t.Errorf("Ranges(%v) = %q, want %q", tc.revs, got, tc.want)
		}
	}
}
