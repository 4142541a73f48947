package backend

import (
	"strings"
	"testing"
	"time"
)

func TestGCPolicyValidate(t *testing.T) {
	if err := DefaultGCPolicy().Validate(); err != nil {
		t.Fatalf("default policy: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*GCPolicy)
		want   string
	}{
		"grace too short":       {func(p *GCPolicy) { p.Grace = time.Minute }, "gc grace 1m0s"},
		"negative run logs":     {func(p *GCPolicy) { p.RunLogs = -time.Hour }, "run log retention"},
		"run logs under grace":  {func(p *GCPolicy) { p.RunLogs = 30 * time.Minute }, "run log retention 30m0s: must be at least 1h0m0s"},
		"no drift retention":    {func(p *GCPolicy) { p.DriftReports = 0 }, "drift report retention"},
		"no idempotency window": {func(p *GCPolicy) { p.Requests = 0 }, "idempotency window"},
		"audit under a day":     {func(p *GCPolicy) { p.Audit = time.Hour }, "audit retention 1h0m0s"},
		"negative audit":        {func(p *GCPolicy) { p.Audit = -24 * time.Hour }, "audit retention"},
		"negative releases":     {func(p *GCPolicy) { p.Releases = -1 }, "release history limit -1: must be 0 (keep every revision) or at least 2"},
		"one release":           {func(p *GCPolicy) { p.Releases = 1 }, "release history limit 1"},
	} {
		p := DefaultGCPolicy()
		tc.mutate(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func TestGCPolicyReleases(t *testing.T) {
	for _, n := range []int{0, MinReleaseRetention, 10} {
		p := DefaultGCPolicy()
		p.Releases = n
		if err := p.Validate(); err != nil {
			t.Errorf("release history limit %d: %v", n, err)
		}
	}
}

func TestGCMarks(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	m := gcMarks{}
	if got := m.observe("runs/a", "generate.log", t0); !got.Equal(t0) {
		t.Fatalf("first sighting: %v", got)
	}
	if got := m.observe("runs/a", "generate.log", t0.Add(time.Hour)); !got.Equal(t0) {
		t.Errorf("same signature later: seen %v, want the first sighting", got)
	}
	if got := m.observe("runs/a", "generate.log,release.log", t0.Add(2*time.Hour)); !got.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("a log that gained a part: seen %v, want seen anew", got)
	}
	// A mark from the future (a clock set back) is not trusted.
	m["specs/x"] = gcMark{Seen: t0.Add(48 * time.Hour).Unix()}
	if got := m.observe("specs/x", "", t0); !got.Equal(t0) {
		t.Errorf("mark from the future: seen %v, want now", got)
	}
	if due(t0, t0.Add(time.Hour-time.Second), time.Hour) || !due(t0, t0.Add(time.Hour), time.Hour) {
		t.Error("due must hold exactly once keep has passed")
	}
	m.keepOnly(map[string]bool{"specs/x": true})
	if _, ok := m["runs/a"]; ok || len(m) != 1 {
		t.Errorf("keepOnly left %v", m)
	}
}

func TestGCExpiry(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	names := []string{"a", "b", "c"}
	stamps := []int64{now.Add(-40 * day).UnixNano(), now.Add(-31 * day).UnixNano(), now.Add(-35 * day).UnixNano()}
	if got := driftExpired(names, stamps, now, 30*day); strings.Join(got, ",") != "a,b" {
		t.Errorf("drift: %v, want a,b (the newest, c, is kept even when old)", got)
	}
	if got := driftExpired(names[:1], stamps[:1], now, day); len(got) != 0 {
		t.Errorf("a stack's only report: %v, want kept", got)
	}
	for dayName, want := range map[string]bool{"2026-05-02": true, "2026-05-03": false, "2026-05-09": false, "not-a-day": false} {
		if got := auditDayExpired(dayName, now, 7*day+12*time.Hour); got != want {
			t.Errorf("audit day %s: expired %v, want %v", dayName, got, want)
		}
	}
	if auditDayExpired("2020-01-01", now, 0) {
		t.Error("no audit retention: nothing expires")
	}
	if !requestExpired(now.Add(-25*time.Hour), time.Time{}, now, day) || requestExpired(now.Add(-23*time.Hour), time.Time{}, now, day) {
		t.Error("requests expire after their window from Created")
	}
	if requestExpired(time.Time{}, now.Add(-time.Hour), now, day) || !requestExpired(time.Time{}, now.Add(-day), now, day) {
		t.Error("a request without a time expires a window after it was first seen")
	}
}
