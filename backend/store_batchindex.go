package backend

import (
	"context"
	"slices"
	"sync"
)

// batchIndex remembers, for the state directories of a few releases, which
// batch objects hold each resource's entry, so that GetStateEntry of a
// resource recorded in a batch reads the one or two objects holding it
// instead of every batch of the release: a release of 20,000 resources has
// 800 batches, and a run that waits for the health of each of them read all
// 800 per wait.
//
// It only ever learns: each lookup lists the directory afresh and indexes
// the batches it has not seen (reading their resource IDs), so batches
// written meanwhile, by this process or another, are found. A batch object
// keeps its name's resources when rewritten (batchName), and one cleared
// meanwhile reads as not found. It is bounded like seenReleases: it forgets
// everything past batchIndexDirs directories.
type batchIndex struct {
	mu   sync.Mutex
	dirs map[string]*dirIndex
}

const batchIndexDirs = 8

// dirIndex is what batchIndex knows of one state directory. Its mutex is held
// while it indexes new batches, so concurrent lookups read each batch once.
type dirIndex struct {
	mu      sync.Mutex
	indexed map[string]bool     // batch names read
	holders map[string][]string // resource ID → the batch names holding it
}

func (x *batchIndex) dir(dir string) *dirIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dirs[dir] == nil {
		if x.dirs == nil || len(x.dirs) >= batchIndexDirs {
			x.dirs = map[string]*dirIndex{}
		}
		x.dirs[dir] = &dirIndex{indexed: map[string]bool{}, holders: map[string][]string{}}
	}
	return x.dirs[dir]
}

// batchesHolding returns the batch objects among names (the batches of dir
// now) that hold the entry of resource id, indexing those not seen before.
func (s *Store) batchesHolding(ctx context.Context, dir string, names []string, id string) ([]string, error) {
	d := s.batches.dir(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	var fresh []string
	for _, n := range names {
		if !d.indexed[n] {
			fresh = append(fresh, n)
		}
	}
	ids := make([][]string, len(fresh))
	err := forEach(ctx, len(fresh), func(ctx context.Context, i int) error {
		// Only the IDs: the resources are decoded when one is asked for.
		var b struct {
			Entries []struct {
				ID string `json:"id"`
			} `json:"entries"`
		}
		if ok, err := s.readBatch(ctx, dir+"/"+fresh[i], &b); !ok {
			return err
		}
		for _, e := range b.Entries {
			ids[i] = append(ids[i], e.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, n := range fresh {
		d.indexed[n] = true
		for _, id := range ids[i] {
			d.holders[id] = append(d.holders[id], n)
		}
	}
	var holding []string
	for _, n := range d.holders[id] {
		if slices.Contains(names, n) {
			holding = append(holding, n)
		}
	}
	return holding, nil
}
