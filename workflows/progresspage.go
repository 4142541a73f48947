package workflows

import (
	"encoding/json"

	"github.com/kumoproj/kumo/engine"
)

// ProgressPageQuery answers a ProgressRequest with a ProgressPage: the run's
// progress a page at a time, and only the resources that changed since the
// asker's last look. A run of tens of thousands of resources outgrows one
// answer of ProgressQuery (every node and change, every time), and a client
// following a run asks several times a second.
const ProgressPageQuery = "progress-page"

// ProgressRequest says which part of a run's progress to answer.
type ProgressRequest struct {
	// Since: answer only the nodes that changed after this point of the run
	// (a ProgressPage.Seq); 0 for every node.
	Since uint64 `json:"since,omitempty"`
	// NodesFrom and MaxNodes page the nodes: those from index NodesFrom on,
	// at most MaxNodes of them (0: none).
	NodesFrom int `json:"nodesFrom,omitempty"`
	MaxNodes  int `json:"maxNodes,omitempty"`
	// ChangesFrom and MaxChanges page the preview's changes likewise.
	ChangesFrom int `json:"changesFrom,omitempty"`
	MaxChanges  int `json:"maxChanges,omitempty"`
}

// ProgressPage is a page of a run's Progress: Nodes and Changes hold the
// requested part only.
type ProgressPage struct {
	Progress
	// Seq is the point of the run this answer describes: ask with Since set
	// to it for what changed after.
	Seq uint64 `json:"seq"`
	// NodeIndex[k] is the plan index of Nodes[k].
	NodeIndex []int `json:"nodeIndex,omitempty"`
	// NextNode is the index to ask from for the rest of the nodes changed
	// since Since; 0 when this page has them all.
	NextNode int `json:"nextNode,omitempty"`
	// TotalNodes and TotalChanges count the whole run's nodes and changes.
	TotalNodes   int `json:"totalNodes"`
	TotalChanges int `json:"totalChanges"`
}

// maxResultChanges bounds the changes a run's result carries, in bytes of
// JSON: a result is one payload (2 MB at most), and the failure of a run
// carries its result too.
const maxResultChanges = 512 << 10

// withChanges sets res.Changes to changes, or, when they are too large for
// one payload, says how many there are.
func withChanges(res *Result, changes []engine.Change) {
	res.Changes, res.ChangesOmitted = changes, 0
	if data, err := json.Marshal(changes); err == nil && len(data) <= maxResultChanges {
		return
	}
	res.Changes, res.ChangesOmitted = nil, len(changes)
}

// node returns node i's progress to change, and marks it changed now.
func (r *run) node(i int) *Node {
	r.seq++
	r.nodeSeq[i] = r.seq
	return &r.progress.Nodes[i]
}

// progressPage answers ProgressPageQuery.
func (r *run) progressPage(req ProgressRequest) ProgressPage {
	p := ProgressPage{Progress: r.progress, Seq: r.seq, TotalNodes: len(r.progress.Nodes), TotalChanges: len(r.progress.Changes)}
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
