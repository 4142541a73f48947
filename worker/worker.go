// Package worker builds a Temporal worker that runs kumo's workflows and
// activities on the task queue "kumo". The CLI starts one in-process for the
// embedded server; `kumo worker` runs one against an existing Temporal cluster,
// and `kumo worker --task-queue Q` one that serves only the runtime steps of
// the workspaces routed to queue Q.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/terraform"
	"github.com/kumoproj/kumo/release"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/workflows"
)

// New returns a worker (not yet started) for kumo's task queue.
func New(c client.Client, b backend.Backend) sdkworker.Worker {
	return NewWithOptions(c, b, Options{})
}

// NewWithOptions is New for a long-lived worker (kumo server, kumo worker).
func NewWithOptions(c client.Client, b backend.Backend, o Options) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{WorkerStopTimeout: o.StopTimeout, MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle, Interceptors: interceptors})
	workflows.Register(w)
	activities.Register(w, activities.New(b, NewRuntimes(), RunChecker(c)))
	return w
}

// interceptors record kumo's metrics (metrics.go).
var interceptors = []interceptor.WorkerInterceptor{&metrics{}}

// Runtimes builds one Runtime per type and settings and reuses it, so clients,
// discovery caches and connections are shared by every node of every run.
type Runtimes struct {
	mu    sync.Mutex
	cache map[runtimeKey]runtime.Runtime
}

type runtimeKey struct {
	typ      engine.Type
	settings runspec.RuntimeSettings
}

// NewRuntimes returns an empty runtime cache.
func NewRuntimes() *Runtimes { return &Runtimes{cache: map[runtimeKey]runtime.Runtime{}} }

// For implements release.Runtimes.
func (r *Runtimes) For(typ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Each runtime reads only its own settings: sharing one among runs that
	// differ in the others keeps one set of caches (discovery, terraform handles).
	switch typ {
	case engine.Kubernetes:
		s = runspec.RuntimeSettings{Kubeconfig: s.Kubeconfig, Context: s.Context}
	case engine.Terraform:
		s = runspec.RuntimeSettings{TerraformBinary: s.TerraformBinary, TerraformPluginDir: s.TerraformPluginDir}
	}
	key := runtimeKey{typ, s}
	if rt, ok := r.cache[key]; ok {
		return rt, nil
	}
	var rt runtime.Runtime
	var err error
	switch typ {
	case engine.Kubernetes:
		rt, err = newKubernetes(s)
	case engine.Terraform:
		// Working directories and the plugin cache are worker-local
		// (terraform.DefaultDir, $KUMO_TERRAFORM_DIR); the state is in the backend.
		rt, err = terraform.New(terraform.Config{Binary: s.TerraformBinary, PluginDir: s.TerraformPluginDir})
	default:
		return nil, fmt.Errorf("no runtime for resource type %q", typ)
	}
	if err != nil {
		return nil, err
	}
	r.cache[key] = rt
	return rt, nil
}

// RunChecker asks Temporal whether a run is still going.
func RunChecker(c client.Client) release.RunChecker { return runChecker{c} }

type runChecker struct{ c client.Client }

func (r runChecker) Running(ctx context.Context, workflowID, runID string) (bool, error) {
	d, err := r.c.DescribeWorkflowExecution(ctx, workflowID, runID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, fmt.Errorf("run %s of workflow %s: %w", runID, workflowID, release.ErrRunUnknown)
	}
	if err != nil {
		return false, err
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}
