package drift

// ApplyChangesNothing reports, without asking the apiserver, whether a
// server-side apply of desired (the object kumo would send) by manager onto
// live (as the apiserver returned it, managedFields included) would leave live
// as it is. It answers true only when it is sure:
//   - manager has an Apply entry in live, and every field that entry holds is
//     still in desired (a field dropped from desired would be removed);
//   - every field desired sets has the same value live, lists item by item
//     and of the same length (a value the apiserver would normalise or
//     default differently counts as a change).
//
// Or manager has no entry in live and desired names the object and sets
// nothing else (a bare Namespace): the apply owns no field before or after,
// and the apiserver keeps no entry for an empty set.
//
// false means "not known": the caller asks the apiserver (a dry-run).
func ApplyChangesNothing(desired, live map[string]any, manager string) bool {
	set, err := appliedSet(live, manager)
	switch {
	case err != nil:
		return false
	case set == nil:
		return namesOnly(desired)
	}
	return covers(desired, set) && subset(desired, live)
}

// namesOnly reports whether obj holds nothing but what names it: apiVersion,
// kind, and metadata's name and namespace (fields a field set never holds).
func namesOnly(obj map[string]any) bool {
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for mk := range md {
				if mk != "name" && mk != "namespace" {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// covers reports whether every field of set is in v.
func covers(v any, set map[string]any) bool {
	for k, child := range set {
		if k == "." {
			continue
		}
		_, cv, ok := step(k, v)
		if !ok {
			return false
		}
		if c, _ := child.(map[string]any); !isLeaf(c) && !covers(cv, c) {
			return false
		}
	}
	return true
}

// subset reports whether every field of want has the same value in have.
func subset(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !subset(wv, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	}
	return equal(want, have)
}
