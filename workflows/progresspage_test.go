package workflows

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// pagedRun is a run of n nodes, as planGraph leaves it, with a preview of n
// changes.
func pagedRun(n int) *run {
	r := &run{}
	r.seq = 1
	for i := range n {
		id := fmt.Sprintf("v1:ConfigMap:ns:cm-%d", i)
		r.progress.Nodes = append(r.progress.Nodes, runspec.Node{ID: id, Status: runspec.NodePending})
		r.nodeSeq = append(r.nodeSeq, r.seq)
		r.progress.Changes = append(r.progress.Changes, engine.Change{ID: id, Action: engine.Create})
	}
	return r
}

// pageAll asks r for every node changed since `since`, page by page, as a
// client does.
func pageAll(t *testing.T, r *run, since uint64, maxNodes int) (ids []string, seq uint64) {
	t.Helper()
	req := runspec.ProgressRequest{Since: since, MaxNodes: maxNodes}
	for first := true; ; first = false {
		p := r.progressPage(req)
		if first {
			seq = p.Seq
		}
		if len(p.Nodes) > maxNodes || len(p.Nodes) != len(p.NodeIndex) {
			t.Fatalf("page of %d nodes (%d indexes), max %d", len(p.Nodes), len(p.NodeIndex), maxNodes)
		}
		for k, n := range p.Nodes {
			if r.progress.Nodes[p.NodeIndex[k]].ID != n.ID {
				t.Fatalf("node %s answered as index %d", n.ID, p.NodeIndex[k])
			}
			ids = append(ids, n.ID)
		}
		if p.NextNode == 0 {
			return ids, seq
		}
		req.NodesFrom = p.NextNode
	}
}

// TestProgressPageAnswersWhatChanged: the paged progress answers every node
// the first time, in pages, then only the nodes changed since the seq it
// gave; a change made while the pages are asked for is answered again next
// time rather than missed.
func TestProgressPageAnswersWhatChanged(t *testing.T) {
	r := pagedRun(10)
	all, seq := pageAll(t, r, 0, 3)
	if len(all) != 10 {
		t.Fatalf("first look answered %d nodes, want 10", len(all))
	}
	if got, _ := pageAll(t, r, seq, 3); len(got) != 0 {
		t.Fatalf("nothing changed, yet answered %v", got)
	}
	r.node(7).Status = runspec.NodeRunning
	r.node(2).Status = runspec.NodeSucceeded
	got, seq2 := pageAll(t, r, seq, 1)
	if want := []string{"v1:ConfigMap:ns:cm-2", "v1:ConfigMap:ns:cm-7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after two changes answered %v, want %v", got, want)
	}
	// A change between two pages of one look: cm-1 is before the page
	// asked next, so that look misses it; the next look answers it.
	p := r.progressPage(runspec.ProgressRequest{Since: seq2, MaxNodes: 1})
	r.node(1).Status = runspec.NodeSucceeded
	if len(p.Nodes) != 0 {
		t.Fatalf("answered %v before anything changed", p.Nodes)
	}
	if got, _ := pageAll(t, r, p.Seq, 5); !reflect.DeepEqual(got, []string{"v1:ConfigMap:ns:cm-1"}) {
		t.Fatalf("the next look answered %v, want cm-1", got)
	}
}

// TestProgressPageChanges: the preview's changes come in the pages asked
// for, with their total.
func TestProgressPageChanges(t *testing.T) {
	r := pagedRun(5)
	p := r.progressPage(runspec.ProgressRequest{ChangesFrom: 3, MaxChanges: 4})
	if p.TotalChanges != 5 || len(p.Changes) != 2 || p.Changes[0].ID != "v1:ConfigMap:ns:cm-3" {
		t.Fatalf("changes from 3: %d of %d, first %+v", len(p.Changes), p.TotalChanges, p.Changes)
	}
	if p := r.progressPage(runspec.ProgressRequest{}); p.Nodes != nil || p.Changes != nil || p.TotalNodes != 5 {
		t.Fatalf("a request for neither answered %d nodes, %d changes (total %d)", len(p.Nodes), len(p.Changes), p.TotalNodes)
	}
}

// TestLargeChangesLeaveTheResult: a preview too large for one payload is
// not carried in the run's result, which counts it instead; a small one is.
func TestLargeChangesLeaveTheResult(t *testing.T) {
	var res runspec.Result
	small := pagedRun(3).progress.Changes
	withChanges(&res, small)
	if len(res.Changes) != 3 || res.ChangesOmitted != 0 {
		t.Fatalf("3 changes: carried %d, omitted %d", len(res.Changes), res.ChangesOmitted)
	}
	large := pagedRun(3000).progress.Changes
	for i := range large {
		large[i].Fields = []engine.FieldChange{{Path: "data.v", After: strings.Repeat("x", 200)}}
	}
	withChanges(&res, large)
	if res.Changes != nil || res.ChangesOmitted != 3000 {
		t.Fatalf("3,000 changes of 200 bytes and more: carried %d, omitted %d", len(res.Changes), res.ChangesOmitted)
	}
}
