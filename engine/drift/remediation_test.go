package drift

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestDecide: a remediate-mode check remediates drift, backs off while the
// last remediation is recent (the wait doubling up to the cap), stops after
// the limit of remediations that left the stack drifted, and starts counting
// again once a check finds it in sync. A busy stack costs no attempt.
func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := Policy{Backoff: Duration(time.Minute), MaxBackoff: Duration(3 * time.Minute), Limit: 3}
	drifted := func(at time.Duration) *Report {
		return &Report{CheckTime: t0.Add(at), Counts: Counts{Resources: 2, InSync: 1, Drifted: 1}}
	}
	var prev *Report
	step := func(at time.Duration, want string, attempts int, next time.Duration) *Report {
		t.Helper()
		r := drifted(at)
		r.Decide(prev, p)
		if r.Remediation == nil || r.Remediation.State != want || r.Remediation.Attempts != attempts || !r.Remediation.NextAllowed.Equal(t0.Add(next)) {
			t.Fatalf("check at %s: %+v, want %s, %d attempts, next at %s", at, r.Remediation, want, attempts, next)
		}
		prev = r
		return r
	}
	step(0, Remediating, 1, time.Minute)
	step(30*time.Second, BackingOff, 1, time.Minute)
	step(time.Minute, Remediating, 2, 3*time.Minute) // 2 minutes after the second
	step(2*time.Minute, BackingOff, 2, 3*time.Minute)
	busy := step(3*time.Minute, Remediating, 3, 6*time.Minute) // capped at 3 minutes
	busy.Remediation.Finish("kumo/p/w", 0, OutcomeBusy, "")
	if busy.Remediation.Attempts != 2 || !busy.Remediation.NextAllowed.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("a busy stack counted: %+v", busy.Remediation)
	}
	step(4*time.Minute, Remediating, 3, 7*time.Minute)
	step(time.Hour, Stuck, 3, 7*time.Minute)
	step(2*time.Hour, Stuck, 3, 7*time.Minute)

	inSync := &Report{CheckTime: t0.Add(3 * time.Hour), Counts: Counts{Resources: 2, InSync: 2}}
	inSync.Decide(prev, p)
	if inSync.Remediation != nil {
		t.Fatalf("in sync: %+v", inSync.Remediation)
	}
	prev = inSync
	step(4*time.Hour, Remediating, 1, 4*time.Hour+time.Minute)

	unreadable := &Report{CheckTime: t0, Counts: Counts{Resources: 1, Error: 1}}
	unreadable.Decide(nil, p)
	if unreadable.Remediation != nil {
		t.Errorf("a resource that could not be read was remediated: %+v", unreadable.Remediation)
	}
}

func TestPolicyDefaultsAndDuration(t *testing.T) {
	var p Policy
	if p.backoff(1) != DefaultBackoff || p.backoff(10) != DefaultMaxBackoff || p.limit() != DefaultLimit {
		t.Errorf("defaults: %s %s %d", p.backoff(1), p.backoff(10), p.limit())
	}
	var c Config
	if err := json.Unmarshal([]byte(`{"remediation":{"backoff":"2m","maxBackoff":"1h","approval":"required"},"webhook":"http://x/y"}`), &c); err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Remediation.Backoff) != 2*time.Minute || !c.Remediation.ApprovalRequired() || c.Validate("ws.yaml") != nil {
		t.Errorf("parsed %+v, %v", c, c.Validate("ws.yaml"))
	}
	if err := json.Unmarshal([]byte(`{"remediation":{"backoff":300}}`), &c); err == nil {
		t.Error("a number of nanoseconds was taken for a duration")
	}
	bad := Config{Webhook: Webhook{URL: "ftp://x"}, Remediation: Policy{Approval: "maybe"}}
	if err := bad.Validate("ws.yaml"); err == nil {
		t.Error("bad webhook and approval accepted")
	}
}

// TestEvents: a webhook hears of new drift once, not again while it lasts; of
// its resolution; of a remediation starting and ending; and of the checks
// becoming stuck once.
func TestEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	check := func(prev *Report, n int, drifted ...string) *Report {
		r := &Report{RunID: "r" + string(rune('0'+n)), CheckTime: t0.Add(time.Duration(n) * time.Minute)}
		r.Add(Result{ID: "ok", Status: InSync})
		for _, id := range drifted {
			r.Add(Result{ID: id, Status: Drifted, Fields: []Field{{Path: "/x"}}})
		}
		r.CarryOver(prev)
		return r
	}
	types := func(es []Event) (out []string) {
		for _, e := range es {
			out = append(out, e.Event)
			for _, r := range e.Resources {
				out = append(out, r.ID)
			}
		}
		return out
	}
	first := check(nil, 1, "a")
	second := check(first, 2, "a")
	third := check(second, 3, "a", "b")
	fourth := check(third, 4)
	for i, c := range []struct {
		r, prev *Report
		want    string
	}{
		{first, nil, "[drift-detected a]"},
		{second, first, "[]"},
		{third, second, "[drift-detected b]"},
		{fourth, third, "[drift-resolved]"},
	} {
		if got := fmt.Sprint(types(c.r.Events(c.prev))); got != c.want {
			t.Errorf("check %d: events %v, want %s", i+1, got, c.want)
		}
	}
	p := Policy{Limit: 1}
	second.Decide(first, p)
	if got := types(second.Events(first)); len(got) != 1 || got[0] != EventRemediationStarted {
		t.Errorf("remediating check: %v", got)
	}
	second.Remediation.Finish("kumo/p/w", 2, OutcomeFailed, "boom")
	if e, ok := second.RemediationEvent(); !ok || e.Event != EventRemediationFailed || e.Remediation.Revision != 2 || e.ID() != "r2/remediation-failed" {
		t.Errorf("remediation event %+v %v", e, ok)
	}
	third.Decide(second, p)
	if got := fmt.Sprint(types(third.Events(second))); got != "[drift-detected b drift-stuck]" {
		t.Errorf("stuck check: %v", got)
	}
	again := check(third, 5, "a", "b")
	again.Decide(third, p)
	if got := again.Events(third); len(got) != 0 {
		t.Errorf("still stuck: %v", types(got))
	}
}
