package local

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
)

// trashIn lists the trash names directly in dir.
func trashIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), trashPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// holdTrash stops d's trash from being emptied until the returned func is
// called.
func holdTrash(d *Driver) (release func()) {
	d.trash.mu.Lock()
	d.trash.busy = true // as if emptying: add queues, starts nothing
	d.trash.mu.Unlock()
	return func() { go d.trash.empty() }
}

// TestRemovalsReturnBeforeTheSpaceIsFreed: DeleteAll, Delete and a replacing
// Write return with the names gone or replaced for every reader while what
// they removed still waits in the trash, and Wait returns once it is gone.
func TestRemovalsReturnBeforeTheSpaceIsFreed(t *testing.T) {
	ctx := context.Background()
	d, err := NewDriver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"w/1.state/a.json", "w/1.state/b.json", "w/1.yaml", "w/drift.json"} {
		if _, err := d.Write(ctx, k, []byte("old "+k), backend.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	d.Wait()
	release := holdTrash(d)
	if err := d.DeleteAll(ctx, "w/1.state"); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "w/drift.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "w/1.yaml", []byte("new"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	if ents, err := d.List(ctx, "w"); err != nil || len(ents) != 1 || ents[0].Name != "1.yaml" {
		t.Fatalf("listing after the removals: %v, %v; want 1.yaml alone", ents, err)
	}
	if data, _, err := d.Read(ctx, "w/1.yaml"); err != nil || string(data) != "new" {
		t.Fatalf("replaced file reads %q, %v", data, err)
	}
	dir := d.Where("w")
	if got := trashIn(t, dir); len(got) != 3 {
		t.Fatalf("trash before it is emptied: %v; want the state tree, the drift report and the old copy", got)
	}
	release()
	d.Wait()
	if got := trashIn(t, dir); len(got) != 0 {
		t.Fatalf("trash left after Wait: %v", got)
	}
}

// TestAnEndedProcesssTrashGoesWithTheNextRemoval: trash an earlier process
// left (it exited, or was killed, before emptying it) is taken the first
// time this one empties trash in the same directory.
func TestAnEndedProcesssTrashGoesWithTheNextRemoval(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "w")
	tree := filepath.Join(dir, trashPrefix+"old", "gone")
	if err := os.MkdirAll(tree, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(tree, "a.json"), filepath.Join(dir, trashPrefix+"copy")} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := NewDriver(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(ctx, "w/1.yaml", []byte("1"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if got := trashIn(t, dir); len(got) != 2 {
		t.Fatalf("a first write replaced nothing, yet the leftovers went: %v", got)
	}
	if _, err := d.Write(ctx, "w/1.yaml", []byte("2"), backend.Condition{}); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if got := trashIn(t, dir); len(got) != 0 {
		t.Fatalf("leftover trash after this process emptied its own there: %v", got)
	}
}

// TestTrashForgetsDirectoriesPastItsBound: the directories a long-lived
// driver searched for leftovers are not kept forever.
func TestTrashForgetsDirectoriesPastItsBound(t *testing.T) {
	root := t.TempDir()
	tr := newTrash()
	for i := range maxSwept + 10 {
		dir := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		tr.add(filepath.Join(dir, trashPrefix+"x"))
		tr.wait()
	}
	if n := len(tr.swept); n > maxSwept {
		t.Fatalf("%d directories remembered, bound %d", n, maxSwept)
	}
}
