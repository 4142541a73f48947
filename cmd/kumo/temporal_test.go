package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestTemporalSetupRegistersSearchAttributes on a namespace that lacks them.
func TestTemporalSetupRegistersSearchAttributes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	ts := temporalServer(t)
	address := ts.address
	tc := ts.dial(t)
	defer tc.Close()
	ctx := context.Background()
	if _, err := tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: "team-a", WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, home: t.TempDir(), project: "p"}
	run := func(args ...string) result {
		cmd := e.commandNoCluster(ctx, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	}
	if r := run("temporal", "setup"); r.code == 0 || !strings.Contains(r.stderr, "--temporal-address") {
		t.Errorf("setup without an address: %s", r)
	}
	if r := run(append(ts.flags(), "--temporal-namespace", "team-a", "worker")...); r.code == 0 || !strings.Contains(r.stderr, "kumo temporal setup --temporal-address "+address+" --temporal-namespace team-a") {
		t.Errorf("worker on a namespace without kumo's search attributes: %s", r)
	}
	// An existing namespace keeps its retention, whatever --retention says.
	if r := run(append(ts.flags(), "--temporal-namespace", "team-a", "temporal", "setup", "--retention", "48h")...); r.code != 0 || !strings.Contains(r.stdout, "KumoProject") ||
		!strings.Contains(r.stdout, "namespace team-a keeps closed runs for 24h0m0s") {
		t.Fatalf("setup: %s", r)
	}
	// A missing one is registered with it; a second setup changes nothing.
	for range 2 {
		if r := run(append(ts.flags(), "--temporal-namespace", "team-b", "temporal", "setup", "--retention", "48h")...); r.code != 0 ||
			!strings.Contains(r.stdout, "namespace team-b keeps closed runs for 48h0m0s") || !strings.Contains(r.stdout, "KumoRevision (Int) is registered in namespace team-b") {
			t.Fatalf("setup of a namespace that does not exist: %s", r)
		}
	}
	if r := run(append(ts.flags(), "--temporal-namespace", "team-c", "temporal", "setup", "--retention", "10m")...); r.code == 0 || !strings.Contains(r.stderr, "--retention 10m0s") {
		t.Errorf("setup with a retention below Temporal's minimum: %s", r)
	}
	resp, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"KumoProject", "KumoStack", "KumoWorkspace", "KumoOperation", "KumoRevision", "KumoStatus"} {
		if _, ok := resp.CustomAttributes[name]; !ok {
			t.Errorf("namespace team-a lacks %s after setup: %v", name, resp.CustomAttributes)
		}
	}
}
