package workflows

import (
	"context"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// startWorker starts an embedded Temporal server and a worker on TaskQueue with
// the workflows and acts, for what the test environment does not do as a
// server does (cancelling activities, recording histories). All is stopped
// when the test ends.
func startWorker(t testing.TB, acts *activities.Activities) client.Client {
	t.Helper()
	tc := startServer(t)
	startWorkerOn(t, tc, acts, worker.Options{})
	return tc
}

// startServer starts an embedded Temporal server and returns a client of it;
// both are stopped when the test ends.
func startServer(t testing.TB) client.Client {
	t.Helper()
	srv := startServerWith(t, embedded.Options{})
	tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	return tc
}

// startServerWith starts an embedded Temporal server with opts (in a
// directory of the test's) and stops it when the test ends.
func startServerWith(t testing.TB, opts embedded.Options) *embedded.Server {
	t.Helper()
	opts.Dir = t.TempDir()
	srv, err := embedded.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop temporal: %v", err)
		}
	})
	return srv
}

// startWorkerOn starts a worker of tc on TaskQueue with the workflows and
// acts, set as kumo's workers set it on top of opts; it stops when the test
// ends if the test has not stopped it.
func startWorkerOn(t testing.TB, tc client.Client, acts *activities.Activities, opts worker.Options) worker.Worker {
	t.Helper()
	opts.MaxHeartbeatThrottleInterval = activities.HeartbeatThrottle
	opts.Interceptors = append(opts.Interceptors, Interceptor)
	w := worker.New(tc, runspec.TaskQueue, opts)
	Register(w)
	activities.Register(w, acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(w.Stop) })
	return stopOnce{w, &once}
}

// stopOnce is a worker whose Stop may be called by the test and again when
// it ends.
type stopOnce struct {
	worker.Worker
	once *sync.Once
}

func (w stopOnce) Stop() { w.once.Do(w.Worker.Stop) }

// ownerConnection is how the owner of srv's home dials it.
func ownerConnection(t testing.TB, srv *embedded.Server) client.ConnectionOptions {
	t.Helper()
	co, err := srv.ConnectionOptions()
	if err != nil {
		t.Fatal(err)
	}
	return co
}
