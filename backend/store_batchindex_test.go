package backend_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/local"
)

// countingDriver counts the batch objects read through it.
type countingDriver struct {
	backend.Driver
	batchReads atomic.Int64
}

func (c *countingDriver) Read(ctx context.Context, key string) ([]byte, string, error) {
	if strings.HasSuffix(key, ".batch.json") {
		c.batchReads.Add(1)
	}
	return c.Driver.Read(ctx, key)
}

// TestGetStateEntryReadsOnlyTheBatchesHoldingIt: once a release's batches
// are indexed, getting one resource's entry reads the batches that hold it,
// not every batch of the release; a batch written later is found, and the
// newest batch holding a resource still wins.
func TestGetStateEntryReadsOnlyTheBatchesHoldingIt(t *testing.T) {
	ctx := context.Background()
	d, err := local.NewDriver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cd := &countingDriver{Driver: d}
	b := backend.NewStore(cd)
	r := backendtest.Release("p", "w", 1)
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatal(err)
	}
	key := backend.KeyOf(r)
	const batches, per = 40, 25
	id := func(i int) string { return fmt.Sprintf("v1:ConfigMap:demo:cm-%04d", i) }
	for k := range batches {
		var entries []backend.StateEntry
		for i := k * per; i < (k+1)*per; i++ {
			res := backendtest.Resource(id(i), int64(i))
			entries = append(entries, backend.StateEntry{ID: res.ID, Resource: &res})
		}
		if err := b.PutStateEntries(ctx, key, entries); err != nil {
			t.Fatal(err)
		}
	}
	get := func(i int) backend.StateEntry {
		t.Helper()
		e, ok, err := b.GetStateEntry(ctx, key, id(i))
		if err != nil || !ok {
			t.Fatalf("GetStateEntry(%s): ok=%v, %v", id(i), ok, err)
		}
		return e
	}
	get(0) // indexes the release's batches
	for _, i := range []int{7, 512, batches*per - 1} {
		before := cd.batchReads.Load()
		if e := get(i); e.ID != id(i) {
			t.Fatalf("GetStateEntry(%s) = %s", id(i), e.ID)
		}
		if reads := cd.batchReads.Load() - before; reads != 1 {
			t.Errorf("GetStateEntry(%s) read %d batches of %d, want the one holding it", id(i), reads, batches)
		}
	}

	// A later batch holding cm-0007 again: found, and it wins.
	again := backendtest.Resource(id(7), 1000)
	if err := b.PutStateEntries(ctx, key, []backend.StateEntry{{ID: again.ID, Resource: &again}, {ID: "v1:ConfigMap:demo:new", Deleted: true}}); err != nil {
		t.Fatal(err)
	}
	before := cd.batchReads.Load()
	if e := get(7); e.Resource == nil || fmt.Sprint(e.Resource.Attributes["spec"].(map[string]any)["revisionHistoryLimit"]) != "1000" {
		t.Errorf("GetStateEntry(cm-0007) after a later batch = %+v, want the later one", e.Resource)
	}
	if reads := cd.batchReads.Load() - before; reads != 3 {
		t.Errorf("read %d batches, want 3: the new one to index it, and the two holding cm-0007", reads)
	}
	if e, ok, err := b.GetStateEntry(ctx, key, "v1:ConfigMap:demo:new"); err != nil || !ok || !e.Deleted {
		t.Errorf("the later batch's new entry: %+v, %v, %v", e, ok, err)
	}
}
