package drift

import (
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
)

// Subset compares the fields an object as kumo applies it sets (desired) with
// the live object, when the apiserver refuses the dry run that Kubernetes
// compares (the live object merged with kumo's fields is invalid: an
// APIService edited to insecureSkipTLSVerify beside kumo's caBundle). Only
// what desired sets is looked at, so server defaults and other managers'
// fields are never drift; of metadata, only labels and annotations. A list
// item live has beyond desired's is drift (kumo's lists are its own).
func Subset(desired, live map[string]any) []Field {
	desired = foldStringData(desired)
	var out []Field
	for _, k := range slices.Sorted(maps.Keys(desired)) {
		lv, has := live[k]
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			dm, _ := desired[k].(map[string]any)
			lm, _ := lv.(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				if dv, ok := dm[mk]; ok {
					lmv, lhas := lm[mk]
					differences("/metadata/"+mk, dv, lmv, lhas, &out)
				}
			}
			continue
		}
		differences("/"+escape(k), desired[k], lv, has, &out)
	}
	return out
}

func differences(ptr string, d, l any, has bool, out *[]Field) {
	if !has {
		*out = append(*out, Field{Path: ptr, Recorded: d, Absent: true})
		return
	}
	if dm, ok := d.(map[string]any); ok {
		if lm, ok := l.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(dm)) {
				lv, lhas := lm[k]
				differences(ptr+"/"+escape(k), dm[k], lv, lhas, out)
			}
			return
		}
	}
	if dl, ok := d.([]any); ok {
		if ll, ok := l.([]any); ok {
			for i := range max(len(dl), len(ll)) {
				p := ptr + "/" + strconv.Itoa(i)
				switch {
				case i >= len(dl):
					*out = append(*out, Field{Path: p, Live: ll[i]})
				case i >= len(ll):
					*out = append(*out, Field{Path: p, Recorded: dl[i], Absent: true})
				default:
					differences(p, dl[i], ll[i], true, out)
				}
			}
			return
		}
	}
	if !equal(d, l) {
		*out = append(*out, Field{Path: ptr, Recorded: d, Live: l})
	}
}

// foldStringData is a Secret's stringData as the apiserver stores it: base64
// in data (stringData's value wins over data's for the same key).
func foldStringData(obj map[string]any) map[string]any {
	if !coreSecret(obj) {
		return obj
	}
	return fold(obj, "stringData", "data", func(_ string, v any) (any, bool) {
		s, ok := v.(string)
		return base64.StdEncoding.EncodeToString([]byte(s)), ok
	})
}
