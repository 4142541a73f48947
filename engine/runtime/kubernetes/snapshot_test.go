package kubernetes

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSnapshotListsGoWhenIdle: a snapshot's list serves the snapshot's calls
// while they keep coming, and is dropped once none has used it for
// snapshotIdle, well before snapshotTTL.
func TestSnapshotListsGoWhenIdle(t *testing.T) {
	var s snapshots
	lists := 0
	list := func(context.Context, listKey) (map[string]*unstructured.Unstructured, error) {
		lists++
		return map[string]*unstructured.Unstructured{}, nil
	}
	k := listKey{}
	for range 3 {
		if _, err := s.list(context.Background(), "run", k, list); err != nil {
			t.Fatal(err)
		}
	}
	if lists != 1 {
		t.Fatalf("three calls of one snapshot listed %d times, want once", lists)
	}
	s.mu.Lock()
	s.expire(time.Now().Add(snapshotIdle / 2))
	kept := len(s.lists)
	s.expire(time.Now().Add(snapshotIdle + time.Second))
	left := len(s.lists)
	s.mu.Unlock()
	if kept != 1 || left != 0 {
		t.Fatalf("lists kept while in use: %d (want 1), after %v idle: %d (want 0)", kept, snapshotIdle, left)
	}
}
