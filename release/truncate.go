package release

import (
	"crypto/sha256"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// maxPreviewValue bounds a field value carried in a preview result, so a large
// ConfigMap does not bloat workflow history; the full object is in the backend.
const maxPreviewValue = 256

// maxPreviewFields bounds how many field changes a preview result lists per
// resource: a ConfigMap whose 20,000 keys all change would otherwise put a
// 1.4 MB event into workflow history. The rest are counted in one last entry.
const maxPreviewFields = 100

func truncateValues(c *engine.Change) {
	if n := len(c.Fields); n > maxPreviewFields {
		c.Fields = append(c.Fields[:maxPreviewFields-1:maxPreviewFields-1],
			engine.FieldChange{Path: fmt.Sprintf("(%d more fields change)", n-maxPreviewFields+1)})
	}
	for i := range c.Fields {
		c.Fields[i].Before = truncate(c.Fields[i].Before)
		c.Fields[i].After = truncate(c.Fields[i].After)
	}
}

// truncate cuts a long string value, keeping its length and a hash of the
// whole: a change after the cut still shows, and changes the plan's digest.
func truncate(v any) any {
	s, ok := v.(string)
	if !ok || len(s) <= maxPreviewValue {
		return v
	}
	sum := sha256.Sum256([]byte(s))
	return s[:maxPreviewValue] + fmt.Sprintf("... (%d bytes, sha256 %x)", len(s), sum[:6])
}
