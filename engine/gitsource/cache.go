package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CacheBounds bound the source cache: a commit's checkout not used for
// MaxAge is removed, and past MaxBytes the least recently used checkouts go
// first. A checkout a run holds (a Lease) is never removed.
type CacheBounds struct {
	MaxBytes int64
	MaxAge   time.Duration
}

// DefaultCacheBounds: 2 GiB, a week.
var DefaultCacheBounds = CacheBounds{MaxBytes: 2 << 30, MaxAge: 7 * 24 * time.Hour}

// staleTemp is how old a fetch's scratch directory must be to be the
// leftover of a process that died (a fetch in progress is far younger).
const staleTemp = time.Hour

// Lease holds a commit's checkout: while it is held, Evict leaves it alone
// (a shared flock on the checkout directory, which Evict takes exclusively,
// without waiting, before removing it).
type Lease struct {
	Dir string
	f   *os.File
}

// Release lets the checkout be evicted again.
func (l *Lease) Release() {
	if l != nil && l.f != nil {
		_ = l.f.Close() // closing drops the flock
		l.f = nil
	}
}

// Checkout is Fetch holding the checkout: the directory stays until the
// lease is released. Using it marks the checkout as recently used.
func (g *Git) Checkout(ctx context.Context, s *Source, commit string) (*Lease, error) {
	for range 3 {
		dir, err := g.Fetch(ctx, s, commit)
		if err != nil {
			return nil, err
		}
		l, err := lease(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue // evicted between the fetch and the lock: fetch again
		}
		if err != nil {
			return nil, err
		}
		now := time.Now()
		_ = os.Chtimes(dir, now, now)
		return l, nil
	}
	return nil, fmt.Errorf("source %s: the checkout of commit %.12s was evicted three times while being taken: the cache bound is too small", s.Name, commit)
}

// lease takes a shared lock on dir and checks that dir is still the
// directory it opened (not removed by an eviction that held the lock).
func lease(dir string) (*Lease, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(dir)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, os.ErrNotExist
	}
	return &Lease{Dir: dir, f: f}, nil
}

// EvictReport is what one Evict did.
type EvictReport struct {
	Removed    int
	FreedBytes int64
	// InUse are checkouts over a bound that a lease kept.
	InUse int
	// Bytes is the size of what is left.
	Bytes int64
}

type checkout struct {
	dir  string
	size int64
	used time.Time
}

// Evict applies b to the cache: checkouts unused for b.MaxAge go, then the
// least recently used until the rest fits in b.MaxBytes; a checkout under a
// lease stays. Leftover scratch directories of dead fetches go too.
func (g *Git) Evict(b CacheBounds) (EvictReport, error) {
	var rep EvictReport
	if g.Cache == "" {
		return rep, nil
	}
	repos, err := os.ReadDir(g.Cache)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	var all []checkout
	now := time.Now()
	for _, r := range repos {
		if !r.IsDir() {
			continue
		}
		repoDir := filepath.Join(g.Cache, r.Name())
		entries, err := os.ReadDir(repoDir)
		if err != nil {
			return rep, err
		}
		for _, e := range entries {
			p := filepath.Join(repoDir, e.Name())
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			switch {
			case strings.HasPrefix(e.Name(), "."):
				if now.Sub(info.ModTime()) > staleTemp {
					_ = os.RemoveAll(p)
				}
			case e.IsDir() && CheckCommit(e.Name()) == nil:
				all = append(all, checkout{dir: p, size: dirSize(p), used: info.ModTime()})
			}
		}
	}
	slices.SortFunc(all, func(a, b checkout) int { return a.used.Compare(b.used) }) // least recently used first
	var total int64
	for _, c := range all {
		total += c.size
	}
	for _, c := range all {
		old := b.MaxAge > 0 && now.Sub(c.used) > b.MaxAge
		over := b.MaxBytes > 0 && total > b.MaxBytes
		if !old && !over {
			continue
		}
		removed, err := remove(c.dir)
		if err != nil {
			return rep, err
		}
		if !removed {
			rep.InUse++
			continue
		}
		rep.Removed++
		rep.FreedBytes += c.size
		total -= c.size
	}
	rep.Bytes = total
	return rep, nil
}

// remove deletes a checkout and its commit object unless a lease holds it.
func remove(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	// The object goes first: a checkout without it fetches it again, an
	// object without its checkout would be a stray.
	if err := os.Remove(dir + ".commit"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	// Renamed first, so no one opens a half-removed checkout by its name.
	doomed := filepath.Join(filepath.Dir(dir), ".evict-"+filepath.Base(dir))
	if err := os.Rename(dir, doomed); err != nil {
		return false, err
	}
	return true, os.RemoveAll(doomed)
}

var (
	evictMu   sync.Mutex
	lastEvict = map[string]time.Time{}
)

// evictEvery bounds how often MaybeEvict walks a cache.
const evictEvery = 10 * time.Minute

// MaybeEvict runs Evict at most once per evictEvery for this cache in this
// process (a walk of the cache costs a stat per file).
func (g *Git) MaybeEvict(b CacheBounds) (EvictReport, bool, error) {
	evictMu.Lock()
	if time.Since(lastEvict[g.Cache]) < evictEvery {
		evictMu.Unlock()
		return EvictReport{}, false, nil
	}
	lastEvict[g.Cache] = time.Now()
	evictMu.Unlock()
	rep, err := g.Evict(b)
	return rep, true, err
}
