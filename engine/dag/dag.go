// Package dag is a small directed acyclic graph with deterministic ordering. It knows
// nothing about resources: keys are any ordered type, and an edge from -> to means
// "to depends on from" (from comes first in a topological order).
package dag

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"
)

// Graph is a directed graph whose nodes are keys of type K. The zero value is not
// usable; call New. A Graph is not safe for concurrent mutation.
type Graph[K cmp.Ordered] struct {
	nodes map[K]struct{}
	deps  map[K]map[K]struct{} // node -> the nodes it depends on
	users map[K]map[K]struct{} // node -> the nodes that depend on it
}

// New returns an empty graph.
func New[K cmp.Ordered]() *Graph[K] {
	return &Graph[K]{
		nodes: map[K]struct{}{},
		deps:  map[K]map[K]struct{}{},
		users: map[K]map[K]struct{}{},
	}
}

// AddNode adds k; adding a node twice is harmless.
func (g *Graph[K]) AddNode(k K) { g.nodes[k] = struct{}{} }

// HasNode reports whether k is in the graph.
func (g *Graph[K]) HasNode(k K) bool {
	_, ok := g.nodes[k]
	return ok
}

// Len returns the number of nodes.
func (g *Graph[K]) Len() int { return len(g.nodes) }

// AddEdge records that to depends on from, adding both nodes if needed. A self-edge
// (from == to) is kept and makes the graph cyclic.
func (g *Graph[K]) AddEdge(from, to K) {
	g.AddNode(from)
	g.AddNode(to)
	add(g.deps, to, from)
	add(g.users, from, to)
}

func add[K cmp.Ordered](m map[K]map[K]struct{}, a, b K) {
	s := m[a]
	if s == nil {
		s = map[K]struct{}{}
		m[a] = s
	}
	s[b] = struct{}{}
}

// Nodes returns every node in ascending key order.
func (g *Graph[K]) Nodes() []K { return sortedKeys(g.nodes) }

// DependenciesOf returns the nodes k depends on (edges into k), in key order.
func (g *Graph[K]) DependenciesOf(k K) []K { return sortedKeys(g.deps[k]) }

// DependentsOf returns the nodes that depend on k (edges out of k), in key order.
func (g *Graph[K]) DependentsOf(k K) []K { return sortedKeys(g.users[k]) }

func sortedKeys[K cmp.Ordered](m map[K]struct{}) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Reverse returns a new graph with every edge turned around: in the result, a node
// depends on the nodes that depended on it. Destroy walks the reverse graph.
func (g *Graph[K]) Reverse() *Graph[K] {
	r := New[K]()
	for k := range g.nodes {
		r.AddNode(k)
	}
	for to, froms := range g.deps {
		for from := range froms {
			r.AddEdge(to, from)
		}
	}
	return r
}

// TopoSort returns every node so that each comes after all its dependencies. The
// order is deterministic: among the nodes ready at a step the smallest key comes
// first. If the graph has a cycle it returns a *CycleError naming one.
func (g *Graph[K]) TopoSort() ([]K, error) {
	pending := make(map[K]int, len(g.nodes)) // unsatisfied dependency count
	ready := &minHeap[K]{}
	for k := range g.nodes {
		n := len(g.deps[k])
		pending[k] = n
		if n == 0 {
			*ready = append(*ready, k)
		}
	}
	heap.Init(ready)
	out := make([]K, 0, len(g.nodes))
	for ready.Len() > 0 {
		k := heap.Pop(ready).(K)
		out = append(out, k)
		for u := range g.users[k] {
			pending[u]--
			if pending[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	if len(out) == len(g.nodes) {
		return out, nil
	}
	return nil, &CycleError[K]{Cycle: g.findCycle(pending)}
}

// findCycle returns one cycle among the nodes left with unsatisfied dependencies.
// Each of those has at least one dependency that is also left, so following the
// smallest such dependency from any of them must come back to a node already seen.
func (g *Graph[K]) findCycle(pending map[K]int) []K {
	var start K
	first := true
	for k, n := range pending {
		if n > 0 && (first || k < start) {
			start, first = k, false
		}
	}
	seen := map[K]int{}
	var path []K
	for k := start; ; {
		if i, ok := seen[k]; ok {
			path = path[i:]
			break
		}
		seen[k] = len(path)
		path = append(path, k)
		for _, d := range g.DependenciesOf(k) {
			if pending[d] > 0 {
				k = d
				break
			}
		}
	}
	// Start the cycle at its smallest key so the message does not depend on where
	// the walk entered it.
	m := 0
	for i, k := range path {
		if k < path[m] {
			m = i
		}
	}
	cycle := append(slices.Clone(path[m:]), path[:m]...)
	return append(cycle, cycle[0])
}

// CycleError reports a dependency cycle. Cycle lists the nodes so that each depends
// on the next, and ends with the node it starts with: [a b a] means a depends on b
// and b on a.
type CycleError[K cmp.Ordered] struct {
	Cycle []K
}

func (e *CycleError[K]) Error() string {
	parts := make([]string, len(e.Cycle))
	for i, k := range e.Cycle {
		parts[i] = fmt.Sprint(k)
	}
	return "dependency cycle: " + strings.Join(parts, " -> ")
}

type minHeap[K cmp.Ordered] []K

func (h minHeap[K]) Len() int           { return len(h) }
func (h minHeap[K]) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap[K]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap[K]) Push(x any)        { *h = append(*h, x.(K)) }
func (h *minHeap[K]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
