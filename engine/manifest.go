package engine

// This file turns plain Kubernetes manifests, as kubectl takes them (kind: List
// included), into a Spec with Kusion-style IDs and an apply order taken from the
// kinds. Reading them from what a user gives is engine/input's job (ReadInputs);
// this works on the objects, and shares the tables of kinds with Validate.

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ManifestObject is one Kubernetes object of a manifest, and where it was read.
type ManifestObject struct {
	Where  string
	Object map[string]any
}

// ManifestSpec turns Kubernetes objects into a Spec, one Kubernetes resource
// each, as Kusion writes them: ID apiVersion:kind:namespace:name (three parts
// when cluster-scoped), extension GVK. Lists (kind List, or any *List with items)
// are expanded. A namespaced object without a namespace gets namespace ("default"
// when empty); scope is known for built-in kinds and for the kinds of the CRDs
// among objs, other kinds count as namespaced (the runtime asks the cluster
// anyway, and applies a cluster-scoped one without the namespace).
//
// The apply order comes from Argo CD's sync waves (AnnotationSyncWave, 0 when
// absent, negative allowed), then from the kinds inside a wave, as Helm and
// Argo CD order an install (see kindTiers): Namespaces first, then CRDs,
// ServiceAccounts, Secrets and ConfigMaps, storage, Roles, then their
// bindings, Services, workloads, custom resources and webhooks last. Inside a
// wave each tier of kinds starts once the previous tier is applied, not
// healthy (ExtAfterApplied): a Job of one tier that needs a webhook
// configuration of a later one exists (the ingress-nginx install) is not held
// for it. A custom resource still waits for its CRD to be Established. Each
// wave starts once the whole previous wave is healthy. Without annotations a
// manifest set is one wave. Resources come sorted by wave and tier, in input
// order within one.
//
// An object annotated argocd.argoproj.io/hook: Skip is left out, as Argo CD
// leaves it. Another Argo CD hook (PreSync, Sync, PostSync, SyncFail,
// PostDelete) or a Helm hook (helm.sh/hook) goes into the Spec's Hooks, not
// its resources (see Hook); only a hook may have generateName without a name.
//
// An object without apiVersion, kind or metadata.name, and two objects that are
// the same (same group, kind, namespace and name), are errors naming where they
// were read.
func ManifestSpec(objs []ManifestObject, namespace string) (*Spec, error) {
	if namespace == "" {
		namespace = "default"
	}
	var flat []ManifestObject
	var errs []error
	for _, o := range objs {
		flat = expandList(o, flat, &errs)
	}
	plain := make([]map[string]any, len(flat))
	for i := range flat {
		plain[i] = flat[i].Object
	}
	crds := crdScopes(plain)

	type item struct {
		res        Resource
		wave, tier int
	}
	items := make([]item, 0, len(flat))
	seen := map[objectKey]string{}
	seenHooks := map[string]string{}
	var hooks []Hook
	for _, o := range flat {
		obj := o.Object
		apiVersion, kind := str(obj["apiVersion"]), str(obj["kind"])
		meta, _ := obj["metadata"].(map[string]any)
		gk := groupKindOf(apiVersion, kind)
		generated := str(meta["name"]) == "" && str(meta["generateName"]) != ""
		if !isClusterScoped(gk, crds) && str(meta["namespace"]) == "" && (str(meta["name"]) != "" || generated) {
			meta = maps.Clone(meta)
			meta["namespace"] = namespace
			obj = maps.Clone(obj)
			obj["metadata"] = meta
		}
		if _, skip := argoHook(obj); skip {
			continue
		}
		id, err := hookIDOf(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Where, err))
			continue
		}
		wave, err := syncWaveOf(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s: %w", o.Where, kind, id, err))
			continue
		}
		if hook, err := hookOf(obj, id, wave); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s %s: %w", o.Where, kind, id, err))
			continue
		} else if hook != nil {
			if first, dup := seenHooks[id]; dup && !generated {
				errs = append(errs, fmt.Errorf("%s and %s are the same hook (%s): give it once", first, o.Where, id))
				continue
			}
			seenHooks[id] = o.Where
			hooks = append(hooks, *hook)
			continue
		}
		if generated {
			errs = append(errs, fmt.Errorf("%s: %s with metadata.generateName and no name: kumo needs a name to track the object (only a hook may be generated)", o.Where, kind))
			continue
		}
		k, _ := keyOf(obj, crds)
		if first, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("%s and %s are the same object (%s %s): give it once", first, o.Where, kind, objectName(k.namespace, k.name)))
			continue
		}
		seen[k] = o.Where
		gvk := gk.group + "/" + strings.TrimPrefix(apiVersion, gk.group+"/") + ", Kind=" + kind
		items = append(items, item{
			res:  Resource{ID: id, Type: Kubernetes, Attributes: obj, Extensions: map[string]any{ExtGVK: gvk}},
			wave: wave,
			tier: tierOf(gk),
		})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if a.wave != b.wave {
			return cmp.Compare(a.wave, b.wave)
		}
		return a.tier - b.tier
	})
	s := &Spec{Resources: make([]Resource, len(items)), Hooks: hooks}
	// Inside a wave, each tier's last object is its gate: it waits for the
	// other objects of its tier to be applied, and the next tier waits for
	// the gate alone to be applied. Every tier so starts after the whole
	// previous one is applied with dependsOn linear in the number of
	// objects, where "every object waits for every object of the previous
	// tier" would grow with the product of two tiers' sizes. A wave's first
	// object waits for every object of the previous wave to be healthy, and
	// the rest of its first tier for it to be applied.
	// The edges inside a delete stage (deleteStageOf: inside a tier, to its
	// gate's tier-mates and to the wave's first object from the rest of its
	// tier; between tiers of one stage, to the gate of the tier before) are
	// also ExtDeleteWith: they only order the apply, and a delete takes the
	// stage in one round.
	type edge int
	const (
		healthy edge = iota
		applied
		sameStage
	)
	appendExt := func(r *Resource, ext, id string) {
		if r.Extensions[ext] == nil {
			r.Extensions[ext] = []any{}
		}
		r.Extensions[ext] = append(r.Extensions[ext].([]any), id)
	}
	after := func(r *Resource, id string, e edge) {
		r.DependsOn = append(r.DependsOn, id)
		if e >= applied {
			appendExt(r, ExtAfterApplied, id)
		}
		if e == sameStage {
			appendExt(r, ExtDeleteWith, id)
		}
	}
	prevWave := []int(nil) // indexes of the previous wave's objects
	for ws := 0; ws < len(items); {
		we := ws + 1
		for we < len(items) && items[we].wave == items[ws].wave {
			we++
		}
		gate, gateTier := "", 0
		for start := ws; start < we; {
			end := start + 1
			for end < we && items[end].tier == items[start].tier {
				end++
			}
			fromGate := applied
			if gate != "" && deleteStageOf(gateTier) == deleteStageOf(items[start].tier) {
				fromGate = sameStage
			}
			for i := start; i < end; i++ {
				r := items[i].res
				switch {
				case i == ws:
					for _, j := range prevWave {
						after(&r, items[j].res.ID, healthy)
					}
				case start == ws && len(prevWave) > 0 && i < end-1:
					after(&r, items[ws].res.ID, sameStage)
				case i < end-1 && gate != "":
					after(&r, gate, fromGate)
				}
				if i == end-1 && end-start > 1 {
					for j := start; j < i; j++ {
						after(&r, items[j].res.ID, sameStage)
					}
				} else if i == end-1 && i != ws && gate != "" {
					after(&r, gate, fromGate)
				}
				s.Resources[i] = r
			}
			gate, gateTier, start = s.Resources[end-1].ID, items[start].tier, end
		}
		prevWave = prevWave[:0]
		for i := ws; i < we; i++ {
			prevWave = append(prevWave, i)
		}
		ws = we
	}
	if errs := s.validateHooks(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// expandList appends o to out, or its items when it is a List.
func expandList(o ManifestObject, out []ManifestObject, errs *[]error) []ManifestObject {
	kind := str(o.Object["kind"])
	items, isList := o.Object["items"].([]any)
	if !isList || !strings.HasSuffix(kind, "List") {
		return append(out, o)
	}
	for i, it := range items {
		m, ok := it.(map[string]any)
		where := fmt.Sprintf("%s, items[%d]", o.Where, i)
		if !ok {
			*errs = append(*errs, fmt.Errorf("%s: not an object", where))
			continue
		}
		out = expandList(ManifestObject{Where: where, Object: m}, out, errs)
	}
	return out
}
