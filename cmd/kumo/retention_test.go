package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "72h": 72 * time.Hour, "30d": 30 * 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseDays("retention", in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"d", "-1d", "0d", "1.5d", "7 d", "forever", "-3h", "0s", "100000d"} {
		if _, err := parseDays("retention", in); err == nil || !strings.Contains(err.Error(), "--retention") {
			t.Errorf("%q: %v, want an error naming --retention", in, err)
		}
	}
}
