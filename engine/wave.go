package engine

// This file holds Argo CD's sync waves as ManifestSpec orders them, and the
// dependencies that need only be applied: inside a wave, kinds are applied in
// their tier order without waiting for each other's health, and the wave's
// health is waited for before the next wave starts.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AnnotationSyncWave is Argo CD's sync-wave annotation: an integer (negative
// allowed, 0 when absent) that orders the waves of a manifest set.
const AnnotationSyncWave = "argocd.argoproj.io/sync-wave"

// AnnotationHook is Argo CD's hook annotation. "Skip" leaves the object out
// of the apply, as Argo CD does; the others (PreSync, Sync, PostSync,
// SyncFail, PostDelete) make it a Hook.
const AnnotationHook = "argocd.argoproj.io/hook"

// ExtAfterApplied lists those of a resource's dependsOn that need only be
// applied before it starts, not healthy: the kind tiers inside one sync wave.
// Each must be in dependsOn. A custom resource still waits for its CRD to be
// Established, whatever this says.
const ExtAfterApplied = "kumoproj.io/after-applied"

// syncWaveOf returns obj's sync wave: its AnnotationSyncWave, 0 without one.
// A value that is not an integer is an error naming the annotation (Argo CD
// would silently treat it as 0 and apply the object in the wrong wave).
func syncWaveOf(obj map[string]any) (int, error) {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, ok := ann[AnnotationSyncWave]
	if !ok {
		return 0, nil
	}
	s, isString := v.(string)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if !isString || err != nil {
		return 0, fmt.Errorf("metadata.annotations[%q] is %v: want an integer such as \"-1\" or \"2\"", AnnotationSyncWave, v)
	}
	return n, nil
}

// argoHook returns obj's AnnotationHook, trimmed ("" without one), and
// whether the object is to be left out (Skip alone, as Argo CD reads the
// comma-separated list).
func argoHook(obj map[string]any) (hook string, skip bool) {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, ok := ann[AnnotationHook]
	if !ok {
		return "", false
	}
	hook = strings.TrimSpace(fmt.Sprint(v))
	return hook, hook == "Skip"
}

// ExtDeleteWith lists those of a resource's after-applied dependencies
// (ExtAfterApplied) that a delete removes in the same round as it: the edges
// exist only to order the apply, through one object per kind tier
// (ManifestSpec's gate), and ManifestSpec names those inside one delete stage
// (deleteStageOf). Such resources go together, after whatever must go before
// any of them (release.removalGraph), rather than one gate at a time. Each
// must be in ExtAfterApplied.
const ExtDeleteWith = "kumoproj.io/delete-with"

// afterAppliedOf returns r's ExtAfterApplied, checked: a list of IDs, each
// among r.DependsOn. Errors name the extension.
func afterAppliedOf(r *Resource) ([]string, error) {
	return idsAmong(r, ExtAfterApplied, r.DependsOn, "dependsOn")
}

// DeleteWithOf returns r's ExtDeleteWith, checked: a list of IDs, each among
// r's ExtAfterApplied. Errors name the extension.
func DeleteWithOf(r *Resource) ([]string, error) {
	applied, err := afterAppliedOf(r)
	if err != nil {
		return nil, err
	}
	return idsAmong(r, ExtDeleteWith, applied, "extensions."+ExtAfterApplied)
}

// idsAmong reads r's extension ext as a list of resource IDs, each of which
// must be in within (named where in errors).
func idsAmong(r *Resource, ext string, within []string, where string) ([]string, error) {
	v, ok := r.Extensions[ext]
	if !ok || v == nil {
		return nil, nil
	}
	var ids []string
	switch l := v.(type) {
	case []string:
		ids = l
	case []any:
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("extensions.%s[%d] is %v: want a resource ID", ext, i, e)
			}
			ids = append(ids, s)
		}
	default:
		return nil, fmt.Errorf("extensions.%s is %v: want a list of resource IDs from %s", ext, v, where)
	}
	for i, id := range ids {
		if !slices.Contains(within, id) {
			return nil, fmt.Errorf("extensions.%s[%d] is %q, which is not in %s", ext, i, id, where)
		}
	}
	return ids, nil
}

// AppliedOnly returns, by resource ID, the dependencies that resource needs
// only applied (ExtAfterApplied), leaving out the CRD of a custom resource's
// kind: a custom resource is refused until its CRD is Established, so that
// edge always waits for health. Call it on a valid spec (Validate checks the
// extension); entries it cannot read are left out.
func (s *Spec) AppliedOnly() map[string]map[string]bool {
	var out map[string]map[string]bool
	var crds map[groupKind]string
	for i := range s.Resources {
		r := &s.Resources[i]
		ids, err := afterAppliedOf(r)
		if err != nil || len(ids) == 0 {
			continue
		}
		if crds == nil {
			crds = s.crdKinds()
		}
		own := crds[resourceKind(r)]
		for _, id := range ids {
			if id == own {
				continue
			}
			if out == nil {
				out = map[string]map[string]bool{}
			}
			if out[r.ID] == nil {
				out[r.ID] = map[string]bool{}
			}
			out[r.ID][id] = true
		}
	}
	return out
}
