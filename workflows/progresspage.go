package workflows

import (
	"encoding/json"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// maxResultChanges bounds the changes a run's result carries, in bytes of
// JSON: a result is one payload (2 MB at most), and the failure of a run
// carries its result too.
const maxResultChanges = 512 << 10

// withChanges sets res.Changes to changes, or, when they are too large for
// one payload, says how many there are.
func withChanges(res *runspec.Result, changes []engine.Change) {
	res.Changes, res.ChangesOmitted = changes, 0
	if data, err := json.Marshal(changes); err == nil && len(data) <= maxResultChanges {
		return
	}
	res.Changes, res.ChangesOmitted = nil, len(changes)
}

// withOutcome adds to res how each resource ended, as progress says, and
// who started, approved or cancelled the run and what it was narrowed to: a
// client reads them from the run's result instead of asking the ended run,
// which replays its whole history for each answer. The result is no command
// that replay compares, so this needs no workflow version.
func withOutcome(res *runspec.Result, progress runspec.Progress) {
	o := runspec.OutcomeOf(progress.Nodes)
	res.Outcome, res.People, res.Target = &o, progress.People, progress.Target
}

// node returns node i's progress to change, and marks it changed now.
func (r *run) node(i int) *runspec.Node {
	r.seq++
	r.nodeSeq[i] = r.seq
	return &r.progress.Nodes[i]
}

// progressPage answers ProgressPageQuery.
func (r *run) progressPage(req runspec.ProgressRequest) runspec.ProgressPage {
	p := runspec.ProgressPage{Progress: r.progress, Seq: r.seq, TotalNodes: len(r.progress.Nodes), TotalChanges: len(r.progress.Changes)}
	p.Nodes, p.Changes = nil, nil
	for i := max(req.NodesFrom, 0); i < len(r.progress.Nodes) && req.MaxNodes > 0; i++ {
		if r.nodeSeq[i] <= req.Since && req.Since > 0 {
			continue
		}
		if len(p.Nodes) == req.MaxNodes {
			p.NextNode = i
			break
		}
		p.Nodes = append(p.Nodes, r.progress.Nodes[i])
		p.NodeIndex = append(p.NodeIndex, i)
	}
	if from := max(req.ChangesFrom, 0); from < len(r.progress.Changes) && req.MaxChanges > 0 {
		p.Changes = r.progress.Changes[from:min(from+req.MaxChanges, len(r.progress.Changes))]
	}
	return p
}
