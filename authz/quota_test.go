package authz

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLimiterStartsPerMinute(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLimiter(Quota{StartsPerMinute: 3}, nil)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	for i := range 3 {
		if err := l.Admit(ctx, "alice"); err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
	}
	err := l.Admit(ctx, "alice")
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Subject != "alice" || qe.Limit != "starts per minute" || qe.RetryAfter != 20*time.Second {
		t.Fatalf("fourth start in a minute: %v (%+v)", err, qe)
	}
	if err := l.Admit(ctx, "bob"); err != nil {
		t.Fatalf("another subject is limited by alice's starts: %v", err)
	}
	now = now.Add(20 * time.Second)
	if err := l.Admit(ctx, "alice"); err != nil {
		t.Fatalf("after a third of a minute one start is back: %v", err)
	}
	if err := l.Admit(ctx, "alice"); err == nil {
		t.Fatal("only one start came back")
	}
}

func TestLimiterRunsInFlight(t *testing.T) {
	running := map[string]int{"alice": 2}
	count := func(_ context.Context, s string) (int, error) { return running[s], nil }
	l := NewLimiter(Quota{InFlight: 2}, count)
	ctx := context.Background()
	var qe *QuotaError
	if err := l.Admit(ctx, "alice"); !errors.As(err, &qe) || qe.Limit != "runs in flight" || qe.Max != 2 {
		t.Fatalf("third run in flight: %v", err)
	}
	running["alice"] = 1
	if err := l.Admit(ctx, "alice"); err != nil {
		t.Fatalf("second run in flight: %v", err)
	}

	broken := NewLimiter(Quota{InFlight: 2}, func(context.Context, string) (int, error) { return 0, errors.New("visibility down") })
	if err := broken.Admit(ctx, "alice"); err == nil {
		t.Fatal("a count that failed admitted the start (quotas must fail closed)")
	}
	if err := NewLimiter(Quota{InFlight: 1}, nil).Admit(ctx, "alice"); err == nil {
		t.Fatal("a limit without a counter admitted the start")
	}
	if err := NewLimiter(Quota{}, nil).Admit(ctx, "alice"); err != nil {
		t.Fatalf("no quota: %v", err)
	}
}
