package release

import "testing"

// TestCacheBoundsWeight: the cache keeps at most max values, and values of
// at most maxWeight in all, but always the one just put.
func TestCacheBoundsWeight(t *testing.T) {
	c := newCache[string](3, 10, func(v int) int { return v })
	c.put("a", 4)
	c.put("b", 4)
	if _, ok := c.get("a"); !ok {
		t.Fatal("a evicted while the cache weighs 8 of 10")
	}
	c.put("c", 4) // 12 > 10: one of a, b goes
	if _, ok := c.get("c"); !ok || len(c.m) != 2 || c.total != 8 {
		t.Fatalf("after c: %v (total %d), want c and one other, weighing 8", c.m, c.total)
	}
	c.put("big", 50) // heavier than the bound alone: kept, alone
	if _, ok := c.get("big"); !ok || len(c.m) != 1 || c.total != 50 {
		t.Fatalf("after big: %v (total %d), want big alone", c.m, c.total)
	}
	c.put("big", 1) // put again: its old weight goes
	c.put("x", 0)
	c.put("y", 0)
	c.put("z", 0)
	if len(c.m) != 3 || c.total > 1 {
		t.Fatalf("count bound: %v (total %d), want 3 values", c.m, c.total)
	}
}

// TestCacheHas: has finds a key a match accepts, and none when none does.
func TestCacheHas(t *testing.T) {
	c := newCache[string](3, 10, func(int) int { return 0 })
	c.put("p/w#1", 1)
	if !c.has(func(k string) bool { return k == "p/w#1" }) || c.has(func(k string) bool { return k == "p/x#1" }) {
		t.Fatal("has: want p/w#1 found, p/x#1 not")
	}
}
