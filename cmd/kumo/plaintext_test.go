package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFleetWithoutKeyRefused: against an existing Temporal cluster, without a
// codec key file, a worker and every command refuse to start, before dialling
// anything, and say what plaintext would expose and how to go on.
func TestFleetWithoutKeyRefused(t *testing.T) {
	t.Setenv("KUMO_CODEC_KEY_FILE", "")
	t.Setenv("TEMPORAL_ADDRESS", "")
	for _, args := range [][]string{
		{"--temporal-address", "127.0.0.1:1", "worker"},
		{"worker", "--temporal-address", "127.0.0.1:1"},
		{"--temporal-address", "127.0.0.1:1", "release", "list"},
		{"--temporal-address", "127.0.0.1:1", "run", "list"},
	} {
		err := newApp().Run(append([]string{"kumo", "--home", t.TempDir(), "--project", "p"}, args...))
		if err == nil {
			t.Errorf("kumo %v without a codec key: started", args)
			continue
		}
		for _, want := range []string{"no codec key for the Temporal cluster at 127.0.0.1:1", "Secret values", "release files", "Temporal payload",
			"--codec-key-file", "--insecure-plaintext"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("kumo %v without a codec key: %v; want it to say %q", args, err, want)
			}
		}
	}
}

// TestInsecurePlaintextRunsAndWarns: with --insecure-plaintext, a worker of an
// existing cluster without a key starts, warning what is in clear, and a run
// through it (generate) succeeds, the CLI warning the same way. The local
// default (embedded server) needs no key file and warns of nothing.
func TestInsecurePlaintextRunsAndWarns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Temporal and a kumo worker")
	}
	ts := temporalServer(t)
	address := ts.address
	e := &env{t: t, home: t.TempDir(), project: "p"}
	e.flags = append(ts.flags(), "--insecure-plaintext")
	e.environ = []string{"KUMO_CODEC_KEY_FILE="} // none, though temporalServer made the test a fleet key
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stack := writeStack(t, e.project, "", "apps:\n  web: {workload: {type: service, containers: {web: {image: nginx}}}}\n")
	w := e.commandNoCluster(ctx, "worker", "--stack-root", filepath.Dir(stack))
	var werr strings.Builder
	w.Stderr = &werr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Process.Kill(); _ = w.Wait() }()
	waitFor(t, "the plaintext worker to poll", time.Minute, func() bool { return strings.Contains(werr.String(), "kumo worker polling") })
	if s := werr.String(); !strings.Contains(s, "--insecure-plaintext: no codec key for "+address) || !strings.Contains(s, "Secret values") {
		t.Errorf("the worker did not warn that it runs in plaintext: %s", s)
	}

	run := func(args ...string) result {
		cmd := e.commandNoCluster(ctx, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	}
	r := run("generate", "--stack", stack)
	if r.code != 0 || !strings.Contains(r.stdout, "kind: Deployment") {
		t.Fatalf("generate through the plaintext worker: %s", r)
	}
	if !strings.Contains(r.stderr, "warning: --insecure-plaintext: no codec key for "+address) || !strings.Contains(r.stderr, "Secret values") {
		t.Errorf("the CLI did not warn that it runs in plaintext: %s", r)
	}

	// Locally, nothing to configure and nothing to warn of.
	local := &env{t: t, home: t.TempDir(), project: "p"}
	cmd := local.commandNoCluster(ctx, "generate", "--stack", stack)
	cmd.Env = append(cmd.Env, "TEMPORAL_ADDRESS=", "KUMO_CODEC_KEY_FILE=")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "plaintext") {
		t.Errorf("generate with the embedded server: %v\n%s", err, out)
	}
	if _, err := os.Stat(local.home + "/codec.keys"); err != nil {
		t.Errorf("the embedded server's key was not created in the home: %v", err)
	}
}
