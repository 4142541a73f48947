package backendtest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// testAudit: entries come back oldest first, filtered by project, workspace
// and time; concurrent appends at the same instant all land (none overwrites
// another); an entry appended again with its ID is kept once; a bad entry is
// refused naming what is wrong.
func testAudit(t *testing.T, b backend.Backend) {
	if got, err := b.ListAudit(ctx, backend.AuditFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("empty audit log: %v, %v", got, err)
	}
	day1 := time.Date(2026, 11, 24, 23, 59, 59, 0, time.UTC)
	day2 := day1.Add(2 * time.Second)
	entry := func(at time.Time, id, project, workspace string, res backend.AuditResult) backend.AuditEntry {
		return backend.AuditEntry{ID: id, Time: at, Subject: "local:alice", Verified: true, Action: "approve",
			Project: project, Workspace: workspace, Target: "kumo/" + project + "/" + workspace, Result: res, Reason: "r-" + id}
	}
	// Appended newest first: listing sorts by time.
	for _, e := range []backend.AuditEntry{
		entry(day2.Add(time.Minute), "c", "shop", "dev", backend.AuditAllowed),
		entry(day2, "b", "shop", "prod", backend.AuditDenied),
		entry(day1, "a", "shop", "prod", backend.AuditAllowed),
		entry(day1.Add(-time.Hour), "z", "blog", "prod", backend.AuditAllowed),
	} {
		if err := b.AppendAudit(ctx, e); err != nil {
			t.Fatalf("AppendAudit(%s): %v", e.ID, err)
		}
	}
	ids := func(f backend.AuditFilter) string {
		t.Helper()
		got, err := b.ListAudit(ctx, f)
		if err != nil {
			t.Fatalf("ListAudit(%+v): %v", f, err)
		}
		s := ""
		for _, e := range got {
			s += e.ID
		}
		return s
	}
	for _, c := range []struct {
		f    backend.AuditFilter
		want string
	}{
		{backend.AuditFilter{}, "zabc"},
		{backend.AuditFilter{Project: "shop"}, "abc"},
		{backend.AuditFilter{Project: "shop", Workspace: "prod"}, "ab"},
		{backend.AuditFilter{Workspace: "prod"}, "zab"},
		{backend.AuditFilter{Since: day1}, "abc"},
		{backend.AuditFilter{Since: day1.Add(time.Second)}, "bc"},
		{backend.AuditFilter{Since: day2.Add(time.Hour)}, ""},
	} {
		if got := ids(c.f); got != c.want {
			t.Errorf("ListAudit(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
	got, err := b.ListAudit(ctx, backend.AuditFilter{Project: "shop", Workspace: "prod", Since: day2})
	if err != nil || len(got) != 1 {
		t.Fatalf("entry b: %v, %v", got, err)
	}
	if want := entry(day2, "b", "shop", "prod", backend.AuditDenied); got[0] != want {
		t.Errorf("entry b read back as %+v, want %+v", got[0], want)
	}

	// A retried append (same ID, same time) adds nothing.
	if err := b.AppendAudit(ctx, entry(day1, "a", "shop", "prod", backend.AuditAllowed)); err != nil {
		t.Fatal(err)
	}
	if got := ids(backend.AuditFilter{}); got != "zabc" {
		t.Errorf("after a retried append: %q", got)
	}

	// Many writers at the same instant, with and without IDs: none is lost.
	const writers = 24
	same := day2.Add(2 * time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := entry(same, "", "race", "prod", backend.AuditAllowed)
			if i%2 == 0 {
				e.ID = fmt.Sprintf("w%02d", i)
			}
			errs[i] = b.AppendAudit(ctx, e)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent append %d: %v", i, err)
		}
	}
	if got, err := b.ListAudit(ctx, backend.AuditFilter{Project: "race"}); err != nil || len(got) != writers {
		t.Errorf("after %d concurrent appends: %d entries, %v", writers, len(got), err)
	}

	for name, e := range map[string]backend.AuditEntry{
		"no time":      {Subject: "s", Action: "a", Result: backend.AuditAllowed},
		"no subject":   {Time: day1, Action: "a", Result: backend.AuditAllowed},
		"no action":    {Time: day1, Subject: "s", Result: backend.AuditAllowed},
		"result":       {Time: day1, Subject: "s", Action: "a", Result: "maybe"},
		"invalid name": {ID: "../x", Time: day1, Subject: "s", Action: "a", Result: backend.AuditAllowed},
	} {
		if err := b.AppendAudit(ctx, e); err == nil {
			t.Errorf("%s: appended %+v", name, e)
		}
	}
	if _, err := b.ListAudit(ctx, backend.AuditFilter{Project: "../etc"}); err == nil {
		t.Error("ListAudit with an invalid project name: no error")
	}
}
