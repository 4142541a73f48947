package activities

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// TestStatusTooLarge: a status too big for a workflow result fails, naming the
// stack and its size, and suggests a read without --tree when it has a tree;
// it is never cut short.
func TestStatusTooLarge(t *testing.T) {
	st := runspec.StackStatus{Project: "p", Workspace: "w", Resources: []runtime.StatusNode{{ID: "v1:ConfigMap:ns:a"}}}
	if err := statusFits(st, 3); err != nil {
		t.Fatalf("a small status: %v", err)
	}
	st.Resources[0].ID = strings.Repeat("x", runspec.MaxStatusBytes)
	err := statusFits(st, 3)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeStatusTooLarge {
		t.Fatalf("error %v, want a non-retryable %s", err, ErrTypeStatusTooLarge)
	}
	if msg := app.Message(); !strings.Contains(msg, "status of p/w is ") || !strings.Contains(msg, "without --tree") {
		t.Errorf("message %q", msg)
	}
}
