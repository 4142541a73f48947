package release

import "sync"

// cache is a tiny bounded map for immutable values; eviction is arbitrary because
// runs touch one or two entries at a time. Besides a count, it bounds the sum
// of its values' weights (resources, for specs and releases): a worker that
// ran a few runs of 50,000 resources would otherwise keep every spec and
// release of them, hundreds of megabytes each.
type cache[K comparable, V any] struct {
	mu        sync.Mutex
	max       int
	maxWeight int
	weight    func(V) int
	total     int
	m         map[K]V
}

// newCache bounds the cache to max values of at most maxWeight in all (a
// value heavier than that alone is still kept, alone). weight nil: each
// value weighs 0.
func newCache[K comparable, V any](max, maxWeight int, weight func(V) int) cache[K, V] {
	if weight == nil {
		weight = func(V) int { return 0 }
	}
	return cache[K, V]{max: max, maxWeight: maxWeight, weight: weight, m: map[K]V{}}
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// has reports whether the cache holds a value under a key match accepts.
func (c *cache[K, V]) has(match func(K) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if match(k) {
			return true
		}
	}
	return false
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.total -= c.weight(old)
		delete(c.m, k)
	}
	w := c.weight(v)
	for old, ov := range c.m {
		if len(c.m) < c.max && c.total+w <= c.maxWeight {
			break
		}
		c.total -= c.weight(ov)
		delete(c.m, old)
	}
	c.m[k] = v
	c.total += w
}
