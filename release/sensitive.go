package release

import (
	"strings"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
)

// maskDrift shows the recorded and live values of res's sensitive fields (of
// the recorded resource r) as engine.Masked: a drift report is printed and
// stored like a preview.
func maskDrift(res *drift.Result, r *engine.Resource) {
	ptrs := engine.SensitivePointers(r)
	if len(ptrs) == 0 {
		return
	}
	for _, fs := range [][]drift.Field{res.Fields, res.Ignored} {
		for i := range fs {
			if !under(fs[i].Path, ptrs) {
				continue
			}
			if fs[i].Recorded != nil {
				fs[i].Recorded = engine.Masked
			}
			if fs[i].Live != nil {
				fs[i].Live = engine.Masked
			}
		}
	}
}

func under(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
