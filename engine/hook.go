package engine

// This file holds hooks: Kubernetes objects that Argo CD
// (argocd.argoproj.io/hook) or Helm (helm.sh/hook) run around a sync, an
// install, an upgrade, a rollback or a delete instead of managing them. A
// manifest set's hooks go into Spec.Hooks, never into its resources: kumo
// creates them at their point of the run, waits for them to complete, deletes
// them as their delete policy says, and records on the release that they ran
// — they are not recorded as desired state, not pruned, not checked for drift.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Annotations that make an object a hook.
const (
	// AnnotationHookDeletePolicy is Argo CD's hook delete policy annotation:
	// HookSucceeded, HookFailed, BeforeHookCreation (comma-separated).
	AnnotationHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationHelmHook lists the Helm events a hook runs at
	// (pre-install, post-upgrade, test, ..., comma-separated).
	AnnotationHelmHook = "helm.sh/hook"
	// AnnotationHelmHookWeight orders Helm hooks (an integer, 0 without it).
	AnnotationHelmHookWeight = "helm.sh/hook-weight"
	// AnnotationHelmHookDeletePolicy is Helm's hook delete policy:
	// before-hook-creation, hook-succeeded, hook-failed (comma-separated).
	AnnotationHelmHookDeletePolicy = "helm.sh/hook-delete-policy"
)

// HookEvent is when a hook runs: an Argo CD phase or a Helm event.
type HookEvent string

// Argo CD's hook phases.
const (
	HookPreSync    HookEvent = "PreSync"
	HookSync       HookEvent = "Sync"
	HookPostSync   HookEvent = "PostSync"
	HookSyncFail   HookEvent = "SyncFail"
	HookPostDelete HookEvent = "PostDelete"
)

// Helm's hook events.
const (
	HelmPreInstall   HookEvent = "pre-install"
	HelmPostInstall  HookEvent = "post-install"
	HelmPreUpgrade   HookEvent = "pre-upgrade"
	HelmPostUpgrade  HookEvent = "post-upgrade"
	HelmPreDelete    HookEvent = "pre-delete"
	HelmPostDelete   HookEvent = "post-delete"
	HelmPreRollback  HookEvent = "pre-rollback"
	HelmPostRollback HookEvent = "post-rollback"
	HelmTest         HookEvent = "test"
)

// HookDeletePolicy is when kumo deletes a hook's object.
type HookDeletePolicy string

const (
	// HookBeforeCreation deletes an object of the same name before the hook
	// is created (the default of Argo CD and Helm).
	HookBeforeCreation HookDeletePolicy = "BeforeHookCreation"
	// HookSucceeded deletes the object once the hooks of its point succeeded.
	HookSucceeded HookDeletePolicy = "HookSucceeded"
	// HookFailed deletes the object once it failed.
	HookFailed HookDeletePolicy = "HookFailed"
)

// Hook is one hook of a Spec.
type Hook struct {
	// ID is the object's apiVersion:kind:namespace:name; with generateName,
	// the name is the prefix followed by "*".
	ID string `json:"id"`
	// Events are when it runs (one annotation's list; Argo CD's and Helm's
	// are not mixed in one hook).
	Events []HookEvent `json:"events"`
	// Helm: the events are Helm's, and hooks of the same weight still run one
	// after another (by name), as Helm runs them; Argo CD's hooks of one
	// wave are created together.
	Helm bool `json:"helm,omitempty"`
	// Weight orders the hooks of one point: Argo CD's sync-wave, Helm's
	// hook-weight.
	Weight int `json:"weight,omitempty"`
	// DeletePolicies (default: BeforeHookCreation).
	DeletePolicies []HookDeletePolicy `json:"deletePolicies,omitempty"`
	// Attributes is the object, its annotations as given.
	Attributes map[string]any `json:"attributes"`
}

// HookPoint is where in a run hooks run.
type HookPoint string

const (
	// HookPointPre runs before the spec's objects are applied (or, in a
	// destroy, deleted).
	HookPointPre HookPoint = "pre"
	// HookPointSync runs alongside the wave-ordered objects.
	HookPointSync HookPoint = "sync"
	// HookPointPost runs once every object is applied and healthy (or
	// deleted).
	HookPointPost HookPoint = "post"
	// HookPointFail runs when the run failed after it started to change
	// anything.
	HookPointFail HookPoint = "fail"
	// HookPointTest runs a release's tests (kumo test).
	HookPointTest HookPoint = "test"
)

// HookEventsFor returns the events whose hooks run at point p of an
// operation (a remediation syncs as an apply does; HookPointTest is kumo
// test's, whatever op): upgrade says whether an apply is an upgrade (the stack has a
// succeeded release since its last destroy) rather than an install, as
// Helm chooses between pre-install and pre-upgrade.
func HookEventsFor(op Operation, p HookPoint, upgrade bool) []HookEvent {
	helmPre, helmPost := HelmPreInstall, HelmPostInstall
	if upgrade {
		helmPre, helmPost = HelmPreUpgrade, HelmPostUpgrade
	}
	if p == HookPointTest {
		return []HookEvent{HelmTest}
	}
	switch op {
	case OperationApply, OperationRemediate:
	case OperationRollback:
		helmPre, helmPost = HelmPreRollback, HelmPostRollback
	case OperationDestroy:
		switch p {
		case HookPointPre:
			return []HookEvent{HelmPreDelete}
		case HookPointPost:
			return []HookEvent{HelmPostDelete, HookPostDelete}
		}
		return nil
	default:
		return nil
	}
	switch p {
	case HookPointPre:
		return []HookEvent{HookPreSync, helmPre}
	case HookPointSync:
		return []HookEvent{HookSync}
	case HookPointPost:
		return []HookEvent{HookPostSync, helmPost}
	case HookPointFail:
		return []HookEvent{HookSyncFail}
	}
	return nil
}

// HooksAt returns the hooks of hooks that run at any of events, in the order
// they run: by weight, then (for Helm's) by name, stable otherwise.
func HooksAt(hooks []Hook, events []HookEvent) []Hook {
	var out []Hook
	for _, h := range hooks {
		for _, e := range h.Events {
			if slices.Contains(events, e) {
				out = append(out, h)
				break
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Hook) int {
		if c := cmp.Compare(a.Weight, b.Weight); c != 0 {
			return c
		}
		if a.Helm && b.Helm {
			return cmp.Compare(a.Name(), b.Name())
		}
		return 0
	})
	return out
}

// HookGroups splits hooks (in the order HooksAt returns) into the groups
// that run together: Argo CD hooks of one wave, each Helm hook alone.
func HookGroups(hooks []Hook) [][]Hook {
	var out [][]Hook
	for i, h := range hooks {
		if i > 0 && !h.Helm && !hooks[i-1].Helm && hooks[i-1].Weight == h.Weight {
			out[len(out)-1] = append(out[len(out)-1], h)
			continue
		}
		out = append(out, []Hook{h})
	}
	return out
}

// Name is the hook's metadata.name, or its generateName.
func (h Hook) Name() string {
	meta, _ := h.Attributes["metadata"].(map[string]any)
	if n := str(meta["name"]); n != "" {
		return n
	}
	return str(meta["generateName"])
}

// Kind is the hook object's kind.
func (h Hook) Kind() string { return str(h.Attributes["kind"]) }

// Deletes reports whether the hook's delete policies include p (the
// default, with none, is BeforeHookCreation).
func (h Hook) Deletes(p HookDeletePolicy) bool {
	if len(h.DeletePolicies) == 0 {
		return p == HookBeforeCreation
	}
	return slices.Contains(h.DeletePolicies, p)
}

// HookRun is what a run recorded of one hook it ran.
type HookRun struct {
	// ID is the object's ID (with the name the apiserver generated, for a
	// hook with generateName).
	ID string `json:"id"`
	// Event is the event it ran for, Point where in the run.
	Event HookEvent `json:"event"`
	Point HookPoint `json:"point"`
	// Outcome: succeeded or failed; Message says why it failed.
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
	// Deleted: its delete policy had the object deleted afterwards.
	Deleted bool `json:"deleted,omitempty"`
}

// Hook outcomes.
const (
	HookOutcomeSucceeded = "succeeded"
	HookOutcomeFailed    = "failed"
)

var argoEvents = map[string]HookEvent{
	"PreSync": HookPreSync, "Sync": HookSync, "PostSync": HookPostSync,
	"SyncFail": HookSyncFail, "PostDelete": HookPostDelete,
}

var helmEvents = map[string]HookEvent{
	"pre-install": HelmPreInstall, "post-install": HelmPostInstall,
	"pre-upgrade": HelmPreUpgrade, "post-upgrade": HelmPostUpgrade,
	"pre-delete": HelmPreDelete, "post-delete": HelmPostDelete,
	"pre-rollback": HelmPreRollback, "post-rollback": HelmPostRollback,
	"test": HelmTest, "test-success": HelmTest,
}

var argoPolicies = map[string]HookDeletePolicy{
	"BeforeHookCreation": HookBeforeCreation, "HookSucceeded": HookSucceeded, "HookFailed": HookFailed,
}

var helmPolicies = map[string]HookDeletePolicy{
	"before-hook-creation": HookBeforeCreation, "hook-succeeded": HookSucceeded, "hook-failed": HookFailed,
}

// hookOf reads obj's hook annotations: nil when it is not a hook. Argo CD's
// annotation wins over Helm's when both are given, as Argo CD reads them.
// Errors name the annotation and the value.
func hookOf(obj map[string]any, id string, wave int) (*Hook, error) {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	argo, isArgo := ann[AnnotationHook]
	helm, isHelm := ann[AnnotationHelmHook]
	if !isArgo && !isHelm {
		return nil, nil
	}
	h := &Hook{ID: id, Attributes: obj, Weight: wave}
	events, policies, policyAnn, raw := argoEvents, argoPolicies, AnnotationHookDeletePolicy, argo
	if !isArgo {
		h.Helm = true
		events, policies, policyAnn, raw = helmEvents, helmPolicies, AnnotationHelmHookDeletePolicy, helm
	}
	annName := AnnotationHook
	if h.Helm {
		annName = AnnotationHelmHook
	}
	for _, e := range splitList(raw) {
		ev, ok := events[e]
		if !ok {
			return nil, fmt.Errorf("metadata.annotations[%q]: %q is not a hook %s knows (want %s)", annName, e, map[bool]string{true: "Helm", false: "Argo CD"}[h.Helm], strings.Join(sortedKeys(events), ", "))
		}
		if !slices.Contains(h.Events, ev) {
			h.Events = append(h.Events, ev)
		}
	}
	if len(h.Events) == 0 {
		return nil, fmt.Errorf("metadata.annotations[%q] is empty: name the hook's events", annName)
	}
	pol := ann[policyAnn]
	if !isArgo {
		pol = ann[AnnotationHelmHookDeletePolicy]
	} else if _, ok := ann[AnnotationHookDeletePolicy]; !ok {
		// Argo CD also honours Helm's delete policy on its own hooks.
		if v, ok := ann[AnnotationHelmHookDeletePolicy]; ok {
			pol, policies, policyAnn = v, helmPolicies, AnnotationHelmHookDeletePolicy
		}
	}
	for _, p := range splitList(pol) {
		dp, ok := policies[p]
		if !ok {
			return nil, fmt.Errorf("metadata.annotations[%q]: %q is not a delete policy (want %s)", policyAnn, p, strings.Join(sortedKeys(policies), ", "))
		}
		if !slices.Contains(h.DeletePolicies, dp) {
			h.DeletePolicies = append(h.DeletePolicies, dp)
		}
	}
	if h.Helm {
		if v, ok := ann[AnnotationHelmHookWeight]; ok {
			s, isString := v.(string)
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if !isString || err != nil {
				return nil, fmt.Errorf("metadata.annotations[%q] is %v: want an integer such as \"-5\" or \"10\"", AnnotationHelmHookWeight, v)
			}
			h.Weight = n
		}
	}
	return h, nil
}

func splitList(v any) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(fmt.Sprint(v), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// validateHooks checks s.Hooks: each a Kubernetes object whose ID matches,
// with events, not the same object as a resource of s nor as another hook.
func (s *Spec) validateHooks() []error {
	var errs []error
	res := make(map[string]bool, len(s.Resources))
	for _, r := range s.Resources {
		res[r.ID] = true
	}
	seen := map[string]int{}
	for i, h := range s.Hooks {
		at := fmt.Sprintf("hooks[%d] (%s)", i, h.ID)
		id, err := hookIDOf(h.Attributes)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: attributes: %w", at, err))
			continue
		case id != h.ID:
			errs = append(errs, fmt.Errorf("%s: id does not match the object, whose apiVersion:kind:namespace:name is %q", at, id))
		}
		if len(h.Events) == 0 {
			errs = append(errs, fmt.Errorf("%s: no events: say when the hook runs", at))
		}
		for _, e := range h.Events {
			known := argoEvents
			if h.Helm {
				known = helmEvents
			}
			if _, ok := known[string(e)]; !ok {
				errs = append(errs, fmt.Errorf("%s: unknown event %q", at, e))
			}
		}
		for _, p := range h.DeletePolicies {
			if _, ok := argoPolicies[string(p)]; !ok {
				errs = append(errs, fmt.Errorf("%s: unknown delete policy %q (want %s)", at, p, strings.Join(sortedKeys(argoPolicies), ", ")))
			}
		}
		if res[h.ID] {
			errs = append(errs, fmt.Errorf("%s: the same object is a resource of the spec too: an object is either managed or a hook", at))
		}
		if j, dup := seen[h.ID]; dup && !strings.HasSuffix(h.ID, "*") {
			errs = append(errs, fmt.Errorf("%s: the same object as hooks[%d]", at, j))
		}
		seen[h.ID] = i
	}
	return errs
}

// hookIDOf is KubernetesIDOf, with metadata.generateName+"*" standing in
// for a missing name.
func hookIDOf(obj map[string]any) (string, error) {
	meta, _ := obj["metadata"].(map[string]any)
	if str(meta["name"]) == "" && str(meta["generateName"]) != "" {
		id, err := KubernetesIDOf(withName(obj, str(meta["generateName"])))
		return id + "*", err
	}
	return KubernetesIDOf(obj)
}

// withName returns a shallow copy of obj named name.
func withName(obj map[string]any, name string) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	m := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	m["name"] = name
	o := make(map[string]any, len(obj))
	for k, v := range obj {
		o[k] = v
	}
	o["metadata"] = m
	return o
}
