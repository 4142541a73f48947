package workflows

import (
	"context"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/client/embedded"
)

// startWorker starts an embedded Temporal server and a worker on TaskQueue with
// the workflows and acts, for what the test environment does not do as a
// server does (cancelling activities, recording histories). All is stopped
// when the test ends.
func startWorker(t *testing.T, acts *activities.Activities) client.Client {
	t.Helper()
	srv, err := embedded.Start(context.Background(), embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop temporal: %v", err)
		}
	})
	tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	w := worker.New(tc, TaskQueue, worker.Options{MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle})
	Register(w)
	activities.Register(w, acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return tc
}
