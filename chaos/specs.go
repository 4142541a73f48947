package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kumoproj/kumo/engine"
)

// specs are the ConfigMaps of one trial, in a Namespace the trial creates
// itself (so a destroy's leftovers are not hidden by the Namespace's deletion).
// v1 is the first version; v2 drops, changes and adds ConfigMaps; broken is v2
// plus one ConfigMap that fails at apply time, after some of v2's have been
// applied, so --rollback-on-failure has something to undo.
type specs struct {
	v1, v2, broken *engine.Spec
}

// makeSpecs builds a trial's specs of n ConfigMaps in ns. Each ConfigMap may
// depend on an earlier one, so the walk has depth as well as width.
func makeSpecs(rng *rand.Rand, ns string, n int) specs {
	deps := make([]int, n+n/5) // -1: none
	for i := range deps {
		deps[i] = -1
		if i > 0 && rng.IntN(3) == 0 {
			deps[i] = rng.IntN(i)
		}
	}
	cm := func(i int, version string, keep func(int) bool) engine.Resource {
		name := fmt.Sprintf("cm-%03d", i)
		r := engine.Resource{
			ID: engine.KubernetesID("v1", "ConfigMap", ns, name), Type: engine.Kubernetes,
			Attributes: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"data":     map[string]any{"version": version, "index": fmt.Sprint(i)},
			},
		}
		if d := deps[i]; d >= 0 && keep(d) {
			r.DependsOn = []string{engine.KubernetesID("v1", "ConfigMap", ns, fmt.Sprintf("cm-%03d", d))}
		}
		return r
	}
	var s specs
	s.v1 = &engine.Spec{}
	for i := range n {
		s.v1.Resources = append(s.v1.Resources, cm(i, "1", func(int) bool { return true }))
	}
	// v2: of the first n, about 15% dropped and 30% changed; n/5 new ones.
	dropped := map[int]bool{}
	for i := range n {
		if rng.IntN(100) < 15 {
			dropped[i] = true
		}
	}
	inV2 := func(i int) bool { return !dropped[i] }
	s.v2 = &engine.Spec{}
	var added []string
	for i := range len(deps) {
		switch {
		case i < n && dropped[i]:
		case i < n && rng.IntN(100) < 30:
			s.v2.Resources = append(s.v2.Resources, cm(i, "2", inV2))
		case i < n:
			s.v2.Resources = append(s.v2.Resources, cm(i, "1", inV2))
		default:
			r := cm(i, "2", inV2)
			s.v2.Resources = append(s.v2.Resources, r)
			added = append(added, r.ID)
		}
	}
	s.broken = &engine.Spec{Resources: slices.Clone(s.v2.Resources)}
	s.broken.Resources = append(s.broken.Resources, brokenConfigMap(rng, ns, s.v2, added))
	return s
}

// brokenConfigMap fails at apply time, once its dependencies are applied: it
// refers to a key that a ConfigMap new in this apply does not have (a preview
// cannot know that yet, so the failure comes in the middle of the walk). It
// depends on that ConfigMap and on a random part of the others.
func brokenConfigMap(rng *rand.Rand, ns string, spec *engine.Spec, added []string) engine.Resource {
	first := added[rng.IntN(len(added))]
	deps := []string{first}
	for _, r := range spec.Resources {
		if r.ID != first && rng.IntN(100) < 40 {
			deps = append(deps, r.ID)
		}
	}
	return engine.Resource{
		ID: engine.KubernetesID("v1", "ConfigMap", ns, "broken"), Type: engine.Kubernetes, DependsOn: deps,
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "broken", "namespace": ns},
			"data":     map[string]any{"k": "$kumo_path." + first + ".data.nope"},
		},
	}
}
