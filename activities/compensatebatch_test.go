package activities

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine"
)

// TestCompensateResourcesResumesAfterItsHeartbeat tests the adapter around
// release.Manager.CompensateBatch: a retried batch of undos reads what the
// failed attempt heartbeated and undoes only the rest; an undo that fails for
// good is its resource's outcome (its error's text) and the batch goes on; an
// undo that fails for now fails the batch, retryable, with what was undone
// before it as details, and the retry goes on from there.
func TestCompensateResourcesResumesAfterItsHeartbeat(t *testing.T) {
	ctx := context.Background()
	a, b, rt := withMemory(t)
	ids, node := batchRelease(t, b, rt)
	if _, err := a.ApplyResources(ctx, BatchInput{Node: node, IDs: ids}); err != nil {
		t.Fatal(err)
	}
	undo := func(heartbeat *BatchResult, in CompensateBatchInput) (BatchResult, error) {
		var details any // a nil *BatchResult would be a detail of its own
		if heartbeat != nil {
			details = *heartbeat
		}
		var res BatchResult
		err := runActivity(a, a.CompensateResources, in, details, &res)
		return res, err
	}
	exists := func(id string) bool {
		_, ok := rt.Object(id)
		return ok
	}
	creates := func(n int) []engine.Action {
		as := make([]engine.Action, n)
		for i := range as {
			as[i] = engine.Create
		}
		return as
	}

	// a and b were undone by the attempt before: only c is.
	res, err := undo(&BatchResult{Outcomes: []Outcome{{ID: ids[0]}, {ID: ids[1]}}}, CompensateBatchInput{Node: node, IDs: ids[:3], Actions: creates(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outcomes) != 3 || res.Outcomes[2].ID != ids[2] || res.Outcomes[2].Error != "" {
		t.Fatalf("outcomes %+v, want a, b (from the heartbeat) and c undone", res.Outcomes)
	}
	if !exists(ids[0]) || !exists(ids[1]) || exists(ids[2]) {
		t.Fatalf("objects %v, want only c deleted", rt.IDs())
	}

	// d's update cannot be undone (there is no prior state): a is undone after it.
	res, err = undo(nil, CompensateBatchInput{Node: node, IDs: []string{ids[3], ids[0]}, Actions: []engine.Action{engine.Update, engine.Create}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outcomes) != 2 || !strings.Contains(res.Outcomes[0].Error, "not in the prior state") || res.Outcomes[1].Error != "" {
		t.Fatalf("outcomes %+v, want d failed for good and a undone", res.Outcomes)
	}
	if exists(ids[0]) {
		t.Error("a not deleted after d's undo failed")
	}

	// b's delete fails once: the batch fails, retryable, having undone c.
	rt.FailTransiently(ids[1], 1)
	in := CompensateBatchInput{Node: node, IDs: []string{ids[2], ids[1]}, Actions: creates(2)}
	_, err = undo(nil, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.NonRetryable() {
		t.Fatalf("batch with a transient failure: %v, want a retryable error", err)
	}
	var done BatchResult
	if err := app.Details(&done); err != nil || len(done.Outcomes) != 1 || done.Outcomes[0].ID != ids[2] {
		t.Fatalf("details %+v (%v), want c undone before b failed", done, err)
	}
	if !exists(ids[1]) {
		t.Fatal("b deleted although its delete failed")
	}
	if res, err = undo(&done, in); err != nil || len(res.Outcomes) != 2 || exists(ids[1]) {
		t.Fatalf("retry: %+v %v, b exists %v; want c (heartbeat) and b undone", res, err, exists(ids[1]))
	}

	// A heartbeat of other resources is not resumed from.
	if _, err := undo(&BatchResult{Outcomes: []Outcome{{ID: ids[3]}}}, in); err == nil {
		t.Error("a batch resumed after another batch's outcomes")
	}

	// Actions that do not match the resources are refused for good.
	_, err = undo(nil, CompensateBatchInput{Node: node, IDs: ids[:2], Actions: creates(1)})
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeInvalid {
		t.Errorf("batch of 2 resources and 1 action: %v, want a non-retryable %s", err, ErrTypeInvalid)
	}
}
