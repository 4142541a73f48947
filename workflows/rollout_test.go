package workflows

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/engine/rollout"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
)

// fleetRuntime is one fakeRuntime per cluster, told apart by the
// kubeconfig a workspace's settings name.
type fleetRuntime struct {
	mu       sync.Mutex
	clusters map[string]*fakeRuntime
}

func (f *fleetRuntime) cluster(kubeconfig string) *fakeRuntime {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clusters[kubeconfig]
	if c == nil {
		c = &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{}}
		f.clusters[kubeconfig] = c
	}
	return c
}

func (f *fleetRuntime) For(_ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	return f.cluster(s.Kubeconfig), nil
}

type rolloutFixture struct {
	t       testing.TB
	tc      client.Client
	fleet   *fleetRuntime
	backend *local.Backend
	stack   string
}

var fleetNames = []string{"dev-eu1", "prod-eu1", "prod-eu2", "prod-us1", "prod-us2"}

func newRolloutFixture(t testing.TB) *rolloutFixture {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &rolloutFixture{t: t, fleet: &fleetRuntime{clusters: map[string]*fakeRuntime{}}, backend: b}
	for _, w := range fleetNames {
		if err := b.CreateWorkspace(context.Background(), &engine.Workspace{Name: w}); err != nil {
			t.Fatal(err)
		}
	}
	acts := activities.New(b, f.fleet, notRunning{})
	activities.SetGeneration(acts, generate.Policy{AnyStackDir: true})
	srv := startServerWith(t, embedded.Options{})
	f.tc, err = client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger, ConnectionOptions: ownerConnection(t, srv),
		Interceptors: []interceptor.ClientInterceptor{ClientInterceptor}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.tc.Close)
	startWorkerOn(t, f.tc, acts, worker.Options{})
	project := t.TempDir()
	f.stack = filepath.Join(project, "web")
	f.write("project.yaml", "name: p\n")
	f.write("web/stack.yaml", "name: web\n")
	f.image("nginx:1")
	return f
}

func (f *rolloutFixture) write(path, content string) {
	f.t.Helper()
	full := filepath.Join(filepath.Dir(f.stack), path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *rolloutFixture) image(image string) {
	f.write("web/app.yaml", "apps: {web: {workload: {type: service, containers: {web: {image: "+image+"}}}}}\n")
}

func (f *rolloutFixture) start(ctx context.Context, waves string, mutate func(*rollout.Spec)) client.WorkflowRun {
	f.t.Helper()
	ws, err := rollout.ParseWaves(waves)
	if err != nil {
		f.t.Fatal(err)
	}
	spec := rollout.Spec{Name: "v" + time.Now().Format("150405.000000"), Waves: ws}
	spec.Name = strings.ReplaceAll(spec.Name, ".", "-")
	if mutate != nil {
		mutate(&spec)
	}
	plan, err := rollout.Resolve(spec, fleetNames)
	if err != nil {
		f.t.Fatal(err)
	}
	in := runspec.RolloutInput{Project: "p", Stack: "web", Plan: plan, Source: runspec.RolloutSource{StackDir: f.stack},
		Settings: map[string]runspec.RuntimeSettings{}, AutoApprove: true, StartedBy: "tester@host"}
	for _, w := range fleetNames {
		in.Settings[w] = runspec.RuntimeSettings{Kubeconfig: "cluster-" + w}
	}
	wr, err := f.tc.ExecuteWorkflow(WithRolloutScope(ctx, plan.Workspaces()), client.StartWorkflowOptions{
		ID: runspec.RolloutWorkflowID("p", plan.Name), TaskQueue: runspec.TaskQueue}, runspec.RolloutWorkflow, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return wr
}

func (f *rolloutFixture) latest(ws string) *engine.Release {
	f.t.Helper()
	r, err := f.backend.LatestRelease(context.Background(), "p", ws)
	if err != nil {
		f.t.Fatalf("%s: %v", ws, err)
	}
	return r
}

func (f *rolloutFixture) status(ctx context.Context, wr client.WorkflowRun) runspec.RolloutStatus {
	f.t.Helper()
	v, err := f.tc.QueryWorkflow(ctx, wr.GetID(), "", runspec.RolloutStatusQuery)
	if err != nil {
		f.t.Fatal(err)
	}
	var st runspec.RolloutStatus
	if err := v.Get(&st); err != nil {
		f.t.Fatal(err)
	}
	return st
}

func TestRolloutWavesInOrderThenUndoNewestFirst(t *testing.T) {
	f := newRolloutFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// 1. Every workspace gets its first release, wave after wave.
	wr := f.start(ctx, "canary=dev-eu1; 50%=prod-eu*; rest=prod-*", nil)
	var st runspec.RolloutStatus
	if err := wr.Get(ctx, &st); err != nil {
		t.Fatal(err)
	}
	if st.State != runspec.RolloutSucceeded {
		t.Fatalf("rollout %s: %+v", st.State, st)
	}
	order := [][]string{{"dev-eu1"}, {"prod-eu1"}, {"prod-eu2", "prod-us1", "prod-us2"}}
	for i, want := range order {
		var got []string
		for _, s := range st.Waves[i].Workspaces {
			got = append(got, s.Workspace)
			if s.State != runspec.RolloutSucceeded || s.Revision != 1 || s.Prior != 0 {
				t.Errorf("wave %d %s: %+v", i, s.Workspace, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("wave %d = %v, want %v", i, got, want)
		}
	}
	// A wave starts after the one before ended: its releases were created
	// after every release of the one before was finished.
	for i := 1; i < len(order); i++ {
		for _, before := range order[i-1] {
			for _, after := range order[i] {
				b, a := f.latest(before), f.latest(after)
				if !a.CreateTime.After(b.ModifyTime) {
					t.Errorf("%s (wave %d) began at %s, before %s (wave %d) ended at %s", after, i, a.CreateTime, before, i-1, b.ModifyTime)
				}
			}
		}
	}
	if r := f.latest("prod-us1"); !strings.Contains(r.Reason, "wave rest") || r.Stack != "web" {
		t.Errorf("release of prod-us1: reason %q, stack %q", r.Reason, r.Stack)
	}

	// 2. A new image; prod-us1's cluster refuses its Deployment: wave rest
	// fails, and the undo puts every workspace the rollout changed back at
	// revision 1, the failed one too, newest first.
	f.image("nginx:2")
	deploy := "apps/v1:Deployment:p:p-web-web"
	f.fleet.cluster("cluster-prod-us1").reject[deploy] = true
	wr = f.start(ctx, "canary=dev-eu1; 50%=prod-eu*; rest=prod-*", func(s *rollout.Spec) { s.UndoOnFailure = true })
	err := wr.Get(ctx, &st)
	if err == nil || !strings.Contains(err.Error(), "wave rest: 1 of 3 workspaces failed (prod-us1: revision 2 failed") {
		t.Fatalf("rollout with a failing workspace: %v", err)
	}
	st = f.status(ctx, wr)
	if st.State != runspec.RolloutFailed {
		t.Errorf("state %s", st.State)
	}
	var undone []*engine.Release
	for _, w := range fleetNames {
		r := f.latest(w)
		if r.Operation != engine.OperationRollback || r.RollbackOf != 1 || r.Phase != engine.PhaseSucceeded {
			t.Errorf("%s: latest release %d is %s of %d, %s; want a succeeded rollback to 1", w, r.Revision, r.Operation, r.RollbackOf, r.Phase)
			continue
		}
		undone = append(undone, r)
		if img := imageOf(f.fleet.cluster("cluster-"+w), deploy); img != "nginx:1" {
			t.Errorf("%s runs %s after the undo", w, img)
		}
	}
	// Newest first: wave 1 (dev-eu1) is rolled back last.
	slices.SortFunc(undone, func(a, b *engine.Release) int { return a.CreateTime.Compare(b.CreateTime) })
	if len(undone) == 5 && (undone[4].Workspace != "dev-eu1" || undone[3].Workspace != "prod-eu1") {
		var names []string
		for _, r := range undone {
			names = append(names, r.Workspace)
		}
		t.Errorf("undo order %v: want wave 1's workspace last, wave 2's before it", names)
	}
	for _, s := range st.Waves[2].Workspaces {
		if s.State != runspec.RolloutRolledBack || s.UndoRevision == 0 {
			t.Errorf("wave rest %s: %+v", s.Workspace, s)
		}
	}
}

func imageOf(c *fakeRuntime, id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.objects[id]
	spec, _ := o["spec"].(map[string]any)
	tpl, _ := spec["template"].(map[string]any)
	pod, _ := tpl["spec"].(map[string]any)
	cs, _ := pod["containers"].([]any)
	if len(cs) == 0 {
		return ""
	}
	img, _ := cs[0].(map[string]any)["image"].(string)
	return img
}

func TestRolloutPauseApproveResumeAbortFromOtherClients(t *testing.T) {
	f := newRolloutFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	yes := true
	wr := f.start(ctx, "canary=dev-eu1; eu=prod-eu*; us=prod-us*", func(s *rollout.Spec) {
		s.Waves[1].Approval = &yes
		s.Waves[2].Approval = &yes
	})
	waitFor := func(what string, ok func(runspec.RolloutStatus) bool) runspec.RolloutStatus {
		t.Helper()
		for {
			st := f.status(ctx, wr)
			if ok(st) {
				return st
			}
			if ctx.Err() != nil || st.State == runspec.RolloutFailed || st.State == runspec.RolloutAborted || st.State == runspec.RolloutSucceeded {
				t.Fatalf("waiting for %s: %+v", what, st)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("wave eu to await approval", func(st runspec.RolloutStatus) bool { return st.Waves[1].State == runspec.RolloutAwaitingApproval })
	update := func(name string, req runspec.RolloutControl, workspaces []string) error {
		c := ctx
		if workspaces != nil {
			c = WithRolloutScope(ctx, workspaces)
		}
		h, err := f.tc.UpdateWorkflow(c, client.UpdateWorkflowOptions{WorkflowID: wr.GetID(), UpdateName: name, Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(c, nil)
	}
	all := fleetNames
	// The frontend refuses a control that names no workspace; the run one
	// that does not cover all of them.
	if err := update(runspec.RolloutControlUpdate, runspec.RolloutControl{Action: runspec.RolloutPause}, nil); err == nil || !strings.Contains(err.Error(), "must name the rollout's workspaces") {
		t.Errorf("pause without a scope: %v", err)
	}
	if err := update(runspec.RolloutControlUpdate, runspec.RolloutControl{Action: runspec.RolloutPause}, all[:2]); err == nil || !strings.Contains(err.Error(), "needs role deployer on p/prod-eu2") {
		t.Errorf("pause covering two workspaces: %v", err)
	}
	if err := update(runspec.RolloutApproveUpdate, runspec.RolloutControl{Action: runspec.RolloutApprove, Wave: "us"}, all); err == nil || !strings.Contains(err.Error(), "wave us is not the one awaiting approval") {
		t.Errorf("approving the wrong wave: %v", err)
	}
	if err := update(runspec.RolloutControlUpdate, runspec.RolloutControl{Action: runspec.RolloutPause, Reason: "lunch"}, all); err != nil {
		t.Fatal(err)
	}
	if err := update(runspec.RolloutApproveUpdate, runspec.RolloutControl{Action: runspec.RolloutApprove, Wave: "eu"}, []string{"prod-eu1", "prod-eu2"}); err != nil {
		t.Fatal(err)
	}
	// Approved but paused: nothing of wave eu starts.
	time.Sleep(time.Second)
	st := f.status(ctx, wr)
	if st.State != runspec.RolloutPaused || st.Waves[1].Workspaces[0].State != runspec.RolloutPending {
		t.Fatalf("paused rollout went on: %+v", st)
	}
	if err := update(runspec.RolloutControlUpdate, runspec.RolloutControl{Action: runspec.RolloutResume}, all); err != nil {
		t.Fatal(err)
	}
	waitFor("wave us to await approval", func(st runspec.RolloutStatus) bool { return st.Waves[2].State == runspec.RolloutAwaitingApproval })
	if err := update(runspec.RolloutControlUpdate, runspec.RolloutControl{Action: runspec.RolloutAbort, Reason: "enough"}, all); err != nil {
		t.Fatal(err)
	}
	err := wr.Get(ctx, &st)
	if err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("aborted rollout ended with %v", err)
	}
	st = f.status(ctx, wr)
	if st.State != runspec.RolloutAborted || st.Waves[1].State != runspec.RolloutPassed || st.Waves[2].Workspaces[0].State != runspec.RolloutPending {
		t.Errorf("status %+v", st)
	}
	var acts []string
	for _, a := range st.Actions {
		acts = append(acts, a.Action+" by "+a.By.Name)
		if !a.By.Verified {
			t.Errorf("%s recorded unverified", a.Action)
		}
	}
	if len(acts) != 4 || !strings.HasPrefix(acts[0], "pause by local:") || !strings.HasPrefix(acts[1], "approve by") || !strings.HasPrefix(acts[3], "abort by") {
		t.Errorf("actions %v", acts)
	}
	if _, err := f.backend.LatestRelease(ctx, "p", "prod-us1"); err == nil {
		t.Error("an aborted rollout applied wave us")
	}
}

// BenchmarkRolloutWaveOverhead measures what a rollout adds per wave beyond
// its applies: a rollout of 5 one-workspace waves (bake 0: one health read
// each) on an embedded Temporal, less the time its Apply children ran.
//
//	go test -run '^$' -bench RolloutWaveOverhead -benchtime 5x ./workflows/
func BenchmarkRolloutWaveOverhead(b *testing.B) {
	f := newRolloutFixture(b)
	ctx := context.Background()
	var overhead, applies time.Duration
	for i := 0; i < b.N; i++ {
		f.image(fmt.Sprintf("nginx:%d", i))
		began := time.Now()
		wr := f.start(ctx, "a=dev-eu1; b=prod-eu1; c=prod-eu2; d=prod-us1; e=prod-us2", nil)
		var st runspec.RolloutStatus
		if err := wr.Get(ctx, &st); err != nil {
			b.Fatal(err)
		}
		total := time.Since(began)
		var children time.Duration
		for _, w := range st.Waves {
			for _, s := range w.Workspaces {
				d, err := f.tc.DescribeWorkflowExecution(ctx, s.WorkflowID, s.RunID)
				if err != nil {
					b.Fatal(err)
				}
				info := d.GetWorkflowExecutionInfo()
				children += info.GetCloseTime().AsTime().Sub(info.GetStartTime().AsTime())
			}
		}
		overhead += total - children
		applies += children
	}
	waves := time.Duration(b.N * 5)
	b.ReportMetric(float64((overhead/waves).Microseconds())/1000, "ms-overhead/wave")
	b.ReportMetric(float64((applies/waves).Microseconds())/1000, "ms-apply/wave")
}
