package drift

// identity are the fields the apiserver keeps out of managedFields (they name
// the object, they are not owned): desired has them, kumo's set never does.
var identity = map[string]bool{"apiVersion": true, "kind": true}

var identityMeta = map[string]bool{"name": true, "namespace": true}

// ApplyOnlyNewValues returns, without asking the apiserver, the object a
// server-side apply of desired (the object kumo would send) by manager onto
// live (as the apiserver returned it, managedFields included) would leave,
// when that apply only gives new values to fields manager already owns:
//   - manager has an Apply entry in live, every field that entry holds is
//     still in desired, and desired sets no field outside it (nothing is
//     removed, nothing newly owned, no other manager's field taken);
//   - every value that differs is a scalar outside any list (a list is the
//     same item by item, so no list item is added, removed or re-keyed).
//
// The result is a copy of live with desired's values (as desired writes
// them), server-set metadata as live has it; managedFields are not updated.
// It is what the apiserver stores only where nothing server-side rewrites
// the new values (defaulting, admission): the caller decides for which kinds
// and clusters that holds. An apply by manager with force gives it; without
// force, a value another manager also owns is a conflict instead. false
// means "not known": ask the apiserver (a dry-run).
func ApplyOnlyNewValues(desired, live map[string]any, manager string) (map[string]any, bool) {
	set, err := appliedSet(live, manager)
	if err != nil || set == nil || coreSecret(desired) {
		// A Secret's stringData is stored elsewhere (foldWriteOnly).
		return nil, false
	}
	if !covers(desired, set, nil) || !ownedValues(desired, live, set, true) {
		return nil, false
	}
	planned := deepCopy(live).(map[string]any)
	assign(planned, desired)
	return planned, true
}

// ownedValues reports whether every field of want is in set (the fields
// manager owns, fieldsV1) and differs from have, if at all, only in scalar
// values outside lists. top: want is the whole object, whose identity
// fields are not owned.
func ownedValues(want, have map[string]any, set map[string]any, top bool) bool {
	for k, wv := range want {
		hv, has := have[k]
		if top && identity[k] {
			if !has || !equal(wv, hv) {
				return false
			}
			continue
		}
		child, owned := set["f:"+k].(map[string]any)
		if top && k == "metadata" {
			// name and namespace are identity; the rest of metadata is owned.
			wm, ok := wv.(map[string]any)
			hm, hok := hv.(map[string]any)
			if !ok || !hok {
				return false
			}
			rest := map[string]any{}
			for mk, mv := range wm {
				if identityMeta[mk] {
					if !equal(mv, hm[mk]) {
						return false
					}
					continue
				}
				rest[mk] = mv
			}
			if len(rest) == 0 {
				continue
			}
			if !owned || !ownedValues(rest, hm, child, false) {
				return false
			}
			continue
		}
		if !owned || !has {
			return false
		}
		switch w := wv.(type) {
		case map[string]any:
			h, ok := hv.(map[string]any)
			if !ok {
				return false
			}
			if len(w) == 0 {
				if len(h) != 0 {
					return false
				}
				continue
			}
			if !ownedValues(w, h, child, false) {
				return false
			}
		case []any:
			if !equal(w, hv) {
				return false
			}
		case nil:
			// null removes the field: not a new value.
			return false
		default:
			if _, ok := hv.(map[string]any); ok {
				return false
			}
			if _, ok := hv.([]any); ok {
				return false
			}
		}
	}
	return true
}

// assign sets every scalar of from into to, along the same paths (maps only:
// ApplyOnlyNewValues has checked lists are equal and every path exists).
func assign(to, from map[string]any) {
	for k, v := range from {
		switch fv := v.(type) {
		case map[string]any:
			if tm, ok := to[k].(map[string]any); ok {
				assign(tm, fv)
			}
		case []any:
		default:
			to[k] = fv
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
