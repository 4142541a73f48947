package tree

import "testing"

func TestLookup(t *testing.T) {
	v := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}
	if got, ok := Lookup(v, []string{"spec", "ports", "0", "port"}); !ok || got != 80 {
		t.Errorf("Lookup = %v, %v; want 80", got, ok)
	}
	for _, bad := range [][]string{{"spec", "ports", "1"}, {"spec", "ports", "-1"}, {"spec", "ports", "x"}, {"status"}, {"spec", "ports", "0", "port", "deeper"}} {
		if got, ok := Lookup(v, bad); ok {
			t.Errorf("Lookup(%v) = %v, want not found", bad, got)
		}
	}
}
