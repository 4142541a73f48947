package release_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// A spec stored by any client (here, one without a codec key, which stores it
// as it is) and run by a workflow started directly is refused by the worker
// when it holds a sealed value: the CLI's validation is not the only guard.
func TestWorkerRefusesSpecHoldingSealedValue(t *testing.T) {
	const sealed = "kumo:sealed:v1:k1:c29tZXRoaW5nIGZyb20gYW5vdGhlciBwcm9qZWN0"
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, _ := withRuntime(b)
		a, x := ns("a"), cm("x", sealed)
		hash := putSpec(t, b, a, x)
		_, err := m.PlanGraph(ctx, release.PlanInput{Project: "p", Workspace: "w", SpecHash: hash})
		if !errors.Is(err, release.ErrInvalid) || !errors.Is(err, engine.ErrSealedCopied) {
			t.Fatalf("PlanGraph: %v, want ErrInvalid and ErrSealedCopied", err)
		}
		_, err = m.PreviewAndRefresh(ctx, release.Node{SpecHash: hash, ID: x.ID})
		if !errors.Is(err, engine.ErrSealedCopied) {
			t.Fatalf("preview: %v, want ErrSealedCopied", err)
		}
		for _, want := range []string{x.ID, "attributes/data/v", "sealed values cannot be copied between resources"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		if strings.Contains(err.Error(), sealed) {
			t.Errorf("error %q shows the value", err)
		}
	})
}
