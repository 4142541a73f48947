package tfhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// documentFormat is the "kumo" field of every document kumo writes.
const documentFormat = 1

// object is the document holding one key's bytes.
type object struct {
	Kumo    int    `json:"kumo"`
	Version string `json:"version"`
	Data    []byte `json:"data"` // base64 in JSON
}

// index is the document listing a directory: the names of its objects and of
// its subdirectories, each sorted.
type index struct {
	Kumo    int      `json:"kumo"`
	Objects []string `json:"objects"`
	Dirs    []string `json:"dirs"`
}

// indexPrefix starts the names of index documents; no key starts with '!'.
const indexPrefix = "!index:"

func indexName(dir string) string { return indexPrefix + dir }

// split cuts a key or directory at its last '/'.
func split(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func newVersion() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// getObject reads key's document.
func (d *Driver) getObject(ctx context.Context, key string) (object, bool, error) {
	data, ok, err := d.get(ctx, key)
	if err != nil || !ok {
		return object{}, false, err
	}
	var o object
	if err := json.Unmarshal(data, &o); err != nil || o.Kumo != documentFormat || o.Version == "" {
		return object{}, false, fmt.Errorf("%s: not a document kumo wrote (want {\"kumo\": %d, \"version\": ..., \"data\": ...})", d.address(key), documentFormat)
	}
	return o, true, nil
}

func (d *Driver) putObject(ctx context.Context, key string, o object) error {
	body, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return d.put(ctx, key, body, "")
}

// getIndex reads dir's index; a missing one is empty.
func (d *Driver) getIndex(ctx context.Context, dir string) (*index, bool, error) {
	data, ok, err := d.get(ctx, indexName(dir))
	if err != nil || !ok {
		return &index{Kumo: documentFormat}, false, err
	}
	var ix index
	if err := json.Unmarshal(data, &ix); err != nil || ix.Kumo != documentFormat {
		return nil, false, fmt.Errorf("%s: not an index kumo wrote", d.address(indexName(dir)))
	}
	return &ix, true, nil
}

// putIndex stores dir's index, presenting the lock the caller holds on it.
func (d *Driver) putIndex(ctx context.Context, dir string, ix *index, lockID string) error {
	ix.Kumo = documentFormat
	body, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	return d.put(ctx, indexName(dir), body, lockID)
}

func (ix *index) empty() bool { return len(ix.Objects) == 0 && len(ix.Dirs) == 0 }

// add inserts name into a sorted list, reporting whether it was missing.
func add(list *[]string, name string) bool {
	i, found := slices.BinarySearch(*list, name)
	if found {
		return false
	}
	*list = slices.Insert(*list, i, name)
	return true
}

// drop removes name from a sorted list, reporting whether it was there.
func drop(list *[]string, name string) bool {
	i, found := slices.BinarySearch(*list, name)
	if !found {
		return false
	}
	*list = slices.Delete(*list, i, i+1)
	return true
}

// ensureListed makes dir's parent list dir (and so on up), called while
// dir's lock is held and dir's index is about to become non-empty.
func (d *Driver) ensureListed(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	parent, base := split(dir)
	return d.withLock(ctx, indexName(parent), dir, func(id string) error {
		ix, _, err := d.getIndex(ctx, parent)
		if err != nil {
			return err
		}
		if slices.Contains(ix.Dirs, base) {
			return nil
		}
		if ix.empty() {
			if err := d.ensureListed(ctx, parent); err != nil {
				return err
			}
		}
		add(&ix.Dirs, base)
		return d.putIndex(ctx, parent, ix, id)
	})
}

// unlist removes dir from its parent's index (and the parent from its own
// once empty), called while dir's lock is held and dir's index is empty.
func (d *Driver) unlist(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	parent, base := split(dir)
	return d.withLock(ctx, indexName(parent), dir, func(id string) error {
		ix, _, err := d.getIndex(ctx, parent)
		if err != nil {
			return err
		}
		if !drop(&ix.Dirs, base) {
			return nil
		}
		if err := d.putIndex(ctx, parent, ix, id); err != nil {
			return err
		}
		if ix.empty() {
			return d.unlist(ctx, parent)
		}
		return nil
	})
}
