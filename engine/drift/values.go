package drift

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/kumoproj/kumo/internal/keys"
)

// Values compares two attribute trees (a Terraform resource as recorded and as
// a refresh found it): every leaf that differs, by JSON pointer. Maps are
// compared key by key, lists item by item.
func Values(recorded, live map[string]any) []Field {
	var out []Field
	diffTree("", recorded, live, true, &out)
	return out
}

func diffTree(ptr string, rec, live any, liveHas bool, out *[]Field) {
	if liveHas && equal(rec, live) {
		return
	}
	rm, rok := rec.(map[string]any)
	lm, lok := live.(map[string]any)
	if rok && lok {
		for _, k := range keys.Union(rm, lm) {
			lv, has := lm[k]
			rv, rhas := rm[k]
			if !rhas {
				*out = append(*out, Field{Path: ptr + "/" + escape(k), Live: lv})
				continue
			}
			diffTree(ptr+"/"+escape(k), rv, lv, has, out)
		}
		return
	}
	rl, rok := rec.([]any)
	ll, lok := live.([]any)
	if rok && lok {
		// Item by item, as a preview compares lists: an item only one side
		// has is a field of its own (absent live, or live only).
		for i := range max(len(rl), len(ll)) {
			p := ptr + "/" + strconv.Itoa(i)
			switch {
			case i >= len(rl):
				*out = append(*out, Field{Path: p, Live: ll[i]})
			default:
				var lv any
				if i < len(ll) {
					lv = ll[i]
				}
				diffTree(p, rl[i], lv, i < len(ll), out)
			}
		}
		return
	}
	f := Field{Path: ptr, Recorded: rec, Absent: !liveHas}
	if liveHas {
		f.Live = live
	}
	if f.Path == "" {
		f.Path = "/"
	}
	*out = append(*out, f)
}

// equal compares two values as JSON does: numbers by value whatever their Go
// type (int64, float64, json.Number), maps and lists deeply.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && (na == nb || math.IsNaN(na) && math.IsNaN(nb))
	}
	if _, ok := number(b); ok {
		return false
	}
	return a == b || fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
