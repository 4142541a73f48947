package local

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Freeing a file's blocks can cost more than writing it: on ext4 mounted with
// discard, unlinking a file that reached the disk takes about a millisecond,
// one after another across the whole filesystem, and so does renaming a new
// copy over an old one. A run's last step does several of those (its state
// entries go once its release is final, and the release replaces its earlier
// copy), and nothing waits for that space: readers only need the names gone
// or replaced. So the driver moves what it removes, and the copy a replace
// supersedes, to a trash name in the same directory (a rename or a hard link,
// which free nothing), makes that durable as before, and a goroutine of its
// own unlinks the trash afterwards.
//
// Trash names start with trashPrefix, a temporary name (listings skip it). A
// process that ends before its trash is gone leaves it behind; the first time
// a process empties trash in a directory it also takes any trash left there
// (leftovers), so a workspace's leftovers go with its next run.
const trashPrefix = tmpPrefix + "clear-"

// maxSwept bounds how many directories a trash remembers having searched
// for leftovers.
const maxSwept = 1024

// trash unlinks, one at a time, what the driver put in the trash.
type trash struct {
	mu     sync.Mutex
	idle   *sync.Cond // signalled when the queue is empty and no removal runs
	queue  []string
	queued map[string]bool
	busy   bool
	swept  map[string]bool // directories already searched for leftovers
}

func newTrash() *trash {
	t := &trash{queued: map[string]bool{}, swept: map[string]bool{}}
	t.idle = sync.NewCond(&t.mu)
	return t
}

// trashName returns a new trash path in dir; nothing is created.
func trashName(dir string) string {
	return filepath.Join(dir, trashPrefix+strconv.FormatUint(rand.Uint64(), 36))
}

// add queues path (a file or a tree) for removal; "" is ignored.
func (t *trash) add(path string) {
	if path == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.enqueue(path)
	if !t.busy {
		t.busy = true
		go t.empty()
	}
}

// enqueue queues path once; t.mu is held.
func (t *trash) enqueue(path string) {
	if !t.queued[path] {
		t.queued[path] = true
		t.queue = append(t.queue, path)
	}
}

// empty removes the queued paths until none is left. A removal that fails
// leaves its trash for the next sweep of its directory (another process's).
func (t *trash) empty() {
	t.mu.Lock()
	for len(t.queue) > 0 {
		path := t.queue[0]
		t.queue = t.queue[1:]
		dir := filepath.Dir(path)
		if len(t.swept) >= maxSwept {
			clear(t.swept) // a long-lived server's directories: searched again, not remembered forever
		}
		sweep := !t.swept[dir]
		t.swept[dir] = true
		t.mu.Unlock()
		_ = os.RemoveAll(path)
		var left []string
		if sweep {
			left = leftovers(dir)
		}
		t.mu.Lock()
		delete(t.queued, path)
		for _, p := range left {
			t.enqueue(p)
		}
	}
	t.busy = false
	t.idle.Broadcast()
	t.mu.Unlock()
}

// wait returns once everything queued so far is removed.
func (t *trash) wait() {
	t.mu.Lock()
	for t.busy {
		t.idle.Wait()
	}
	t.mu.Unlock()
}

// leftovers lists the trash in dir: an earlier process's, or this one's
// (already queued, or about to be; removing it early only frees its space
// sooner, and a move into a trash directory removed meanwhile is retried).
func leftovers(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), trashPrefix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// keep hard-links the file at path to a new trash name and returns that
// name: path can then be replaced without freeing the old copy's blocks.
// It returns "" when there is nothing to keep (no file at path) or the link
// failed (the replace then frees the old copy itself, as without trash).
func keep(path string) string {
	name := trashName(filepath.Dir(path))
	if err := os.Link(path, name); err != nil {
		return ""
	}
	return name
}
