package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kumoproj/kumo/engine/dag"
)

// Graph returns the dependency graph of s: a node per resource ID and an edge from
// each resource to those that depend on it, through dependsOn, through $kumo_path
// references in their attributes, or, for a custom resource, from the
// CustomResourceDefinition of its kind when the spec holds it. It fails when a dependency names no resource of s
// or when dependencies form a cycle (a *dag.CycleError, wrapped). Apply walks the
// graph in order (dag.Graph.TopoSort); destroy walks its Reverse.
func (s *Spec) Graph() (*dag.Graph[string], error) {
	g, errs := s.buildGraph()
	if _, err := g.TopoSort(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return g, nil
}

// buildGraph adds every resource and every dependency that names a known resource,
// and reports the others. It does not look for cycles.
func (s *Spec) buildGraph() (*dag.Graph[string], []error) {
	g := dag.New[string]()
	known := make(map[string]bool, len(s.Resources))
	for i := range s.Resources {
		g.AddNode(s.Resources[i].ID)
		known[s.Resources[i].ID] = true
	}
	var errs []error
	crds := s.crdKinds()
	for i := range s.Resources {
		r := &s.Resources[i]
		for _, d := range r.DependsOn {
			if !known[d] {
				errs = append(errs, fmt.Errorf("%s: dependsOn names unknown resource %q", where(i, r.ID), d))
				continue
			}
			g.AddEdge(d, r.ID)
		}
		refs, err := refsOf(r, known)
		for _, e := range unjoin(err) {
			errs = append(errs, fmt.Errorf("%s: %w", where(i, r.ID), e))
		}
		for _, ref := range refs {
			g.AddEdge(ref.ResourceID, r.ID)
		}
		// A custom resource comes after the CRD of its kind in the same spec.
		if crd := crds[resourceKind(r)]; crd != "" && crd != r.ID && !slices.Contains(r.DependsOn, crd) {
			g.AddEdge(crd, r.ID)
		}
	}
	return g, errs
}

// where locates resource i of a spec in messages: resources[3] ("v1:ConfigMap:demo:x").
func where(i int, id string) string {
	if id == "" {
		return fmt.Sprintf("resources[%d]", i)
	}
	return fmt.Sprintf("resources[%d] (%q)", i, id)
}

// unjoin splits an errors.Join result into its errors.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
