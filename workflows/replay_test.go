package workflows

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/client/embedded"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

var (
	record    = flag.Bool("record", false, "record testdata/*.json anew from runs on an embedded Temporal server")
	recordTag = flag.String("record-tag", "", "with -record: name the files <run>-<tag>.json, keeping the histories of earlier shapes")
)

// TestReplayRecordedHistories replays histories recorded by earlier versions of
// the workflows: a change that would break runs in flight (nondeterminism) fails
// here, and needs workflow.GetVersion. Record new histories with -record when a
// workflow changes on purpose, and keep the old ones.
func TestReplayRecordedHistories(t *testing.T) {
	if *record {
		recordHistories(t)
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	r := worker.NewWorkflowReplayer()
	Register(r)
	for _, f := range files {
		if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger, f); err != nil {
			t.Errorf("replay %s: %v", f, err)
		}
	}
}

// recordHistories runs Apply (create, a rejected node), Apply (update, delete,
// unchanged, a reference), Preview, Destroy, Rollback and an Apply that fails and compensates, against a real embedded server
// with an in-memory runtime, and saves each history.
func recordHistories(t *testing.T) {
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	tc, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	b, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{objects: map[string]map[string]any{}, reject: map[string]bool{"v1:ConfigMap:ns:bad": true}}
	w := worker.New(tc, TaskQueue, worker.Options{})
	Register(w)
	activities.Register(w, activities.New(b, rt, notRunning{}))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// A stack to generate from, for the runs that start from one.
	project := t.TempDir()
	for path, content := range map[string]string{
		"project.yaml": "name: p\n", "dev/stack.yaml": "name: dev\n",
		"dev/app.yaml": "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {net: {module: network, ports: [{port: 80}]}}}}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PutWorkspace(ctx, &engine.Workspace{Name: "w"}); err != nil {
		t.Fatal(err)
	}
	source := &runspec.GenerateInput{StackDir: filepath.Join(project, "dev"), Project: "p", Workspace: "w"}

	withRef := cm("c", "v1:ConfigMap:ns:a")
	withRef.Attributes["data"] = map[string]any{"from": "$kumo_path.v1:ConfigMap:ns:a.metadata.name"}
	runs := []struct {
		name, workflow string
		spec           *engine.Spec
	}{
		{"apply-create-and-fail", ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a"), cm("bad", "v1:ConfigMap:ns:b")}}},
		{"apply-update-delete-ref", ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), withRef}}},
		{"preview", PreviewWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a")}}},
		{"destroy", DestroyWorkflow, nil},
		{"rollback", RollbackWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("b", "v1:ConfigMap:ns:a")}}},
		{"apply-compensate", ApplyWorkflow, &engine.Spec{Resources: []engine.Resource{cm("a"), cm("x"), cm("bad", "v1:ConfigMap:ns:x")}}},
		{"generate", GenerateWorkflow, nil},
		{"apply-from-stack", ApplyWorkflow, nil},
	}
	for _, run := range runs {
		in := RunInput{Project: "p", Workspace: "w", AutoApprove: true, Parallelism: 2}
		if run.workflow == RollbackWorkflow {
			in.RollbackOf = 1
		}
		in.RollbackOnFailure = run.name == "apply-compensate"
		if run.spec != nil {
			if in.SpecHash, err = b.PutSpec(ctx, run.spec); err != nil {
				t.Fatal(err)
			}
		}
		var input any = in
		switch run.name {
		case "generate":
			input = *source
		case "apply-from-stack":
			in.Source = source
			input = in
		}
		wr, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kumo/p/w/" + run.name, TaskQueue: TaskQueue}, run.workflow, input)
		if err != nil {
			t.Fatal(err)
		}
		_ = wr.Get(ctx, nil) // the first run fails on purpose
		var events []*historypb.HistoryEvent
		it := tc.GetWorkflowHistory(ctx, wr.GetID(), wr.GetRunID(), false, 0)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		data, err := protojson.MarshalOptions{Indent: " "}.Marshal(&historypb.History{Events: events})
		if err != nil {
			t.Fatal(err)
		}
		name := run.name
		if *recordTag != "" {
			name += "-" + *recordTag
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
