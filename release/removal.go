package release

import (
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/dag"
)

// removalGraph orders the deletion of recorded resources: a resource goes after
// everything that depended on it. Dependencies on resources outside the set are
// ignored (those stay).
//
// Resources joined by engine.ExtDeleteWith (a manifest set's delete stage: the
// workloads and what they use, say) go in one round: each waits for whatever
// any of them waits for, and whatever waits for one of them waits for all of
// them. Followed as recorded, each kind tier of a stage would be two rounds,
// its gate and then the rest, since the gate depends on its tier-mates only to
// start the next tier once they are applied. Joining adds edges (each member
// of a stage waits for each member of the stage deleted before it), so when
// the joined graph would pass removalEdgeBudget, or have a cycle (what a
// hand-written spec's extensions may say), the recorded edges are kept.
// order is the graph's nodes in an order it allows; an error means the
// recorded edges have a cycle.
func removalGraph(resources []engine.Resource) (g *dag.Graph[string], order []string, _ error) {
	if len(resources) == 0 {
		return nil, nil, nil
	}
	index := make(map[string]int, len(resources))
	for i, r := range resources {
		index[r.ID] = i
	}
	// after[x]: the resources x goes after (those that depended on it).
	after := make([][]int, len(resources))
	edges := 0
	for y, r := range resources {
		for _, dep := range r.DependsOn {
			if x, ok := index[dep]; ok {
				after[x] = append(after[x], y)
				edges++
			}
		}
	}
	if joined := joinDeleteWith(resources, index, after, removalEdgeBudget(len(resources), edges)); joined != nil {
		g := graphOf(resources, joined)
		if order, err := g.TopoSort(); err == nil {
			return g, order, nil
		}
	}
	g = graphOf(resources, after)
	order, err := g.TopoSort()
	return g, order, err
}

// removalEdgeBudget is how many edges a removal graph of n resources and
// edges recorded edges may have once its groups are joined.
func removalEdgeBudget(n, edges int) int { return max(4096, 8*(n+edges)) }

// joinDeleteWith returns after with the groups of resources that
// engine.ExtDeleteWith joins taken as one round, or nil when there is none to
// join, a group has an edge inside it that the extension does not name (a
// dependency that is not only an apply's order), or the result would have
// more than budget edges.
func joinDeleteWith(resources []engine.Resource, index map[string]int, after [][]int, budget int) [][]int {
	group := make([]int, len(resources)) // union-find parent
	for i := range group {
		group[i] = i
	}
	find := func(i int) int {
		for group[i] != i {
			group[i] = group[group[i]]
			i = group[i]
		}
		return i
	}
	with := make([]map[int]bool, len(resources)) // with[y][x]: y names x in ExtDeleteWith
	joins := false
	for y := range resources {
		ids, err := engine.DeleteWithOf(&resources[y])
		if err != nil {
			return nil // a stored spec was validated; an unreadable one is followed as recorded
		}
		for _, id := range ids {
			x, ok := index[id]
			if !ok {
				continue
			}
			if with[y] == nil {
				with[y] = map[int]bool{}
			}
			with[y][x] = true
			group[find(x)] = find(y)
			joins = true
		}
	}
	if !joins {
		return nil
	}
	members := map[int][]int{}
	for i := range resources {
		members[find(i)] = append(members[find(i)], i)
	}
	// Each group's prerequisites: the groups its members go after.
	pre := map[int]map[int]bool{}
	for x, ys := range after {
		gx := find(x)
		for _, y := range ys {
			gy := find(y)
			if gy == gx {
				if !with[y][x] {
					return nil
				}
				continue
			}
			if pre[gx] == nil {
				pre[gx] = map[int]bool{}
			}
			pre[gx][gy] = true
		}
	}
	joined := make([][]int, len(resources))
	total := 0
	for x := range resources {
		for g := range pre[find(x)] {
			total += len(members[g])
			if total > budget {
				return nil
			}
			joined[x] = append(joined[x], members[g]...)
		}
	}
	return joined
}

// graphOf is the removal graph in which each resource x depends on after[x].
func graphOf(resources []engine.Resource, after [][]int) *dag.Graph[string] {
	g := dag.New[string]()
	for x, r := range resources {
		g.AddNode(r.ID)
		for _, y := range after[x] {
			g.AddEdge(resources[y].ID, r.ID)
		}
	}
	return g
}
