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
// Two conversions the apiserver always makes are made here too, so that
// objects as charts write them are known: a core Secret's stringData is
// compared as the data it is stored as (foldStringData), and, in a built-in
// kind, an item of a list keyed by protocol (container and Service ports)
// that leaves its protocol out is the item with protocol TCP (keyDefaults).
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
	if !covers(desired, set, keyDefaults(desired)) {
		return false
	}
	if coreSecret(desired) {
		// A value that is not a string the apiserver refuses: not known.
		sd, _ := desired["stringData"].(map[string]any)
		for _, v := range sd {
			if _, ok := v.(string); !ok {
				return false
			}
		}
		desired = foldStringData(desired)
	}
	return subset(desired, live)
}

// protocolTCP is what the apiserver defaults a port's protocol to, in the
// lists of ports it keys by it (a container's, a Service's).
var protocolTCP = map[string]string{"protocol": "TCP"}

// keyDefaults are the list key fields the apiserver defaults in obj's kind:
// a port's protocol in the built-in kinds that have ports (a Service, a Pod
// and the workloads of its template: core, apps, batch). A custom resource's
// defaults are its CRD's, not known here: none.
func keyDefaults(obj map[string]any) map[string]string {
	switch obj["apiVersion"] {
	case "v1", "apps/v1", "batch/v1":
		return protocolTCP
	}
	return nil
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
func covers(v any, set map[string]any, defaults map[string]string) bool {
	for k, child := range set {
		if k == "." {
			continue
		}
		_, cv, ok := step(k, v, defaults)
		if !ok {
			return false
		}
		if c, _ := child.(map[string]any); !isLeaf(c) && !covers(cv, c, defaults) {
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
