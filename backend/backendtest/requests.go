package backendtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
)

// testRequests: of concurrent claims of one request key exactly one wins and
// the others get its record; the winner's run is recorded; a deleted claim
// can be claimed again.
func testRequests(t *testing.T, b backend.Backend) {
	if _, err := b.GetRequest(ctx, "k1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetRequest of an unclaimed key: %v, want ErrNotFound", err)
	}
	const n = 8
	var wg sync.WaitGroup
	won := make(chan string, n)
	lost := make(chan backend.RequestRecord, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fp := string(rune('a' + i))
			prior, err := b.ClaimRequest(ctx, backend.RequestRecord{Key: "k1", Fingerprint: fp, Created: time.Now().UTC()})
			switch {
			case err == nil:
				won <- fp
			case errors.Is(err, backend.ErrExists):
				lost <- prior
			default:
				t.Errorf("ClaimRequest: %v", err)
			}
		}()
	}
	wg.Wait()
	close(won)
	close(lost)
	var winners []string
	for fp := range won {
		winners = append(winners, fp)
	}
	if len(winners) != 1 {
		t.Fatalf("%d claims of one key won, want exactly 1", len(winners))
	}
	for prior := range lost {
		if prior.Key != "k1" || prior.Fingerprint == "" {
			t.Errorf("a losing claim got %+v, want the winner's record", prior)
		}
	}
	rec := backend.RequestRecord{Key: "k1", Fingerprint: winners[0], RunID: "r-1", WorkflowID: "kumo/p/w", Operation: "apply", Project: "p", Workspace: "w"}
	if err := b.PutRequest(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetRequest(ctx, "k1")
	if err != nil || got.RunID != "r-1" || got.Fingerprint != winners[0] {
		t.Fatalf("GetRequest after PutRequest: %+v, %v", got, err)
	}
	if err := b.DeleteRequest(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ClaimRequest(ctx, backend.RequestRecord{Key: "k1", Fingerprint: "z"}); err != nil {
		t.Fatalf("claim after delete: %v", err)
	}
	if _, err := b.ClaimRequest(ctx, backend.RequestRecord{Key: "../x"}); !errors.Is(err, backend.ErrInvalidName) {
		t.Errorf("a key that is no name: %v, want ErrInvalidName", err)
	}
}
