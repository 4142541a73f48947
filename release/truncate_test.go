package release

import (
	"strings"
	"testing"
)

// TestTruncateKeepsChangesAfterTheCut: two long values that differ only past
// the cut stay different in a preview, so the plan's digest tells them apart.
func TestTruncateKeepsChangesAfterTheCut(t *testing.T) {
	long := strings.Repeat("a", maxPreviewValue+10)
	other := long[:len(long)-1] + "b"
	a, b := truncate(long).(string), truncate(other).(string)
	if a == b {
		t.Errorf("values differing after the cut truncate alike: %q", a)
	}
	if !strings.HasPrefix(a, long[:maxPreviewValue]) || len(a) > maxPreviewValue+64 || !strings.Contains(a, "266 bytes") {
		t.Errorf("truncated %q", a)
	}
	if short := "abc"; truncate(short) != short {
		t.Errorf("short value changed: %v", truncate(short))
	}
	if n := truncate(3.0); n != 3.0 {
		t.Errorf("number changed: %v", n)
	}
}
