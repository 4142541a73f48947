package runspec

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// nodesOf is n ConfigMap nodes as a walk of batches leaves them: each batch
// of 64 shares its start, durations differ, the last few fail or never ran.
func nodesOf(n int) []Node {
	start := time.Date(2026, 11, 26, 4, 0, 0, 123456789, time.UTC)
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: engine.KubernetesID("v1", "ConfigMap", "bench", fmt.Sprintf("cm-%05d", i)), Action: engine.Create, Status: NodeSucceeded,
			Started: start.Add(time.Duration(i/64) * 37 * time.Millisecond)}
		nodes[i].Finished = nodes[i].Started.Add(time.Duration(1+i%17) * time.Millisecond)
	}
	nodes[n-3].Status, nodes[n-3].Error = NodeFailed, `configmaps "cm" is forbidden`
	nodes[n-2].Status, nodes[n-2].Started, nodes[n-2].Finished = NodeSkipped, time.Time{}, time.Time{}
	nodes[n-1].Status, nodes[n-1].Finished, nodes[n-1].Health = NodeUnchanged, time.Time{}, "Progressing → Healthy"
	return nodes
}

// TestOutcomeAt50000: the outcome of 50,000 resources counts each and packs
// all of them into a result, and unpacks to the very nodes.
func TestOutcomeAt50000(t *testing.T) {
	nodes := nodesOf(50000)
	o := OutcomeOf(nodes)
	if o.Total != 50000 || o.Done.Create != 49997 || o.Failed != 1 || o.NotRun != 1 || o.Done.Unchanged != 1 {
		t.Errorf("outcome counts %+v", o)
	}
	if o.Nodes == nil {
		t.Fatal("50,000 nodes were not packed")
	}
	t.Logf("50,000 nodes packed in %d bytes (at most %d)", len(o.Nodes), MaxPackedNodes)
	got, err := UnpackNodes(o.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, nodes) {
		for i := range nodes {
			if !reflect.DeepEqual(got[i], nodes[i]) {
				t.Fatalf("node %d unpacked as %+v, want %+v", i, got[i], nodes[i])
			}
		}
		t.Fatalf("unpacked %d nodes, want %d", len(got), len(nodes))
	}
}

// TestOutcomeTooLargeIsCounted: nodes that do not fit in a result are left
// out, and still counted.
func TestOutcomeTooLargeIsCounted(t *testing.T) {
	nodes := nodesOf(4000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range nodes { // errors that do not compress
		noise := make([]byte, 240)
		for k := range noise {
			noise[k] = byte(rng.Uint32())
		}
		nodes[i].Status, nodes[i].Error = NodeFailed, base64.StdEncoding.EncodeToString(noise)
	}
	packed, err := PackNodes(nodes)
	if err != nil || len(packed) <= MaxPackedNodes {
		t.Fatalf("the test's nodes packed in %d bytes (%v), within the bound", len(packed), err)
	}
	o := OutcomeOf(nodes)
	if o.Nodes != nil || o.Failed != 4000 || o.Total != 4000 {
		t.Errorf("too large an outcome: %d bytes of nodes, %d failed of %d", len(o.Nodes), o.Failed, o.Total)
	}
}

// TestUnpackRefusesInconsistentColumns: a packed value whose columns differ
// in length is an error, not nodes made up.
func TestUnpackRefusesInconsistentColumns(t *testing.T) {
	enc, _, err := packCodecs()
	if err != nil {
		t.Fatal(err)
	}
	bad := enc.EncodeAll([]byte(`{"ids":["a","b"],"actions":["create"],"status":["succeeded","succeeded"],"started":[0,0],"took":[1,1]}`), nil)
	if _, err := UnpackNodes(bad); err == nil {
		t.Error("columns of different lengths unpacked")
	}
	if _, err := UnpackNodes([]byte("not zstd")); err == nil {
		t.Error("bytes that are no zstd frame unpacked")
	}
}
