package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/pgtest"
	"github.com/kumoproj/kumo/internal/s3test"
)

// TestTenAppliesAtOnce: against one kumo server, on the local backend and on
// S3, ten kumo apply processes of the same stack started at once: one runs
// (it waits at its confirmation prompt, so it is still running when the others
// end), the nine others fail at once naming it, and it makes the only
// revision. Then ten applies of ten different projects at once all succeed.
func TestTenAppliesAtOnce(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"local", "s3", "postgres", "http"} {
		t.Run(name, func(t *testing.T) {
			var e *env
			switch name {
			case "s3":
				srv := s3test.Start(t)
				e = s3Env(t, srv, srv.Bucket(t))
			case "postgres":
				e = pgEnv(t, pgtest.Start(t))
			case "http":
				e = httpEnv(t)
			default:
				e = newEnv(t)
			}
			e.startServer()
			e.tenOfOneStack()
			e.tenStacks()
		})
	}
}

func (e *env) tenOfOneStack() {
	t := e.t
	spec := e.writeSpec("spec.yaml", manyConfigMaps(e.ns, 20))
	type apply struct {
		answer *os.File
		wait   func() result
	}
	applies := make([]apply, 10)
	for i := range applies {
		// An *os.File, not an io.Pipe: the process reads it directly, so
		// waiting for one that was refused does not wait for its input to end.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		_, wait := e.background(r, "apply", "-f", spec)
		r.Close()
		applies[i] = apply{w, wait}
	}
	type ended struct {
		i int
		r result
	}
	done := make(chan ended, len(applies))
	for i, a := range applies {
		go func() { done <- ended{i, a.wait()} }()
	}
	var refused []result
	running := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true}
	for range 9 {
		end := <-done
		delete(running, end.i)
		refused = append(refused, end.r)
	}
	var winner int
	for i := range running {
		winner = i
	}
	runID, _ := e.release(1)["runID"].(string)
	if runID == "" {
		t.Fatalf("no run holds revision 1: %+v", e.releases())
	}
	for _, r := range refused {
		if r.code == 0 || !strings.Contains(r.stderr, "another run is in progress") || !strings.Contains(r.stderr, "locked by run "+runID) {
			t.Errorf("a second apply, while run %s waits for approval: %s", runID, r)
		}
	}
	fmt.Fprintln(applies[winner].answer, "yes")
	applies[winner].answer.Close()
	if r := (<-done).r; r.code != 0 {
		t.Fatalf("the apply that ran: %s", r)
	}
	if rows := e.releases(); len(rows) != 1 || rows[0].Revision != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases %+v, want revision 1 succeeded alone", rows)
	}
	if got, _ := e.release(1)["runID"].(string); got != runID {
		t.Errorf("revision 1 is run %s, want %s", got, runID)
	}
}

func (e *env) tenStacks() {
	t := e.t
	envs := make([]env, 10)
	results := make([]result, 10)
	var wg sync.WaitGroup
	for i := range envs {
		envs[i] = *e
		envs[i].project, envs[i].ns = fmt.Sprintf("%s-%d", e.project, i), fmt.Sprintf("%s-%d", e.ns, i)
		spec := e.writeSpec(fmt.Sprintf("spec-%d.yaml", i), manyConfigMaps(envs[i].ns, 20))
		wg.Go(func() { results[i] = envs[i].run("apply", "--yes", "-f", spec) })
	}
	wg.Wait()
	for i := range envs {
		if results[i].code != 0 {
			t.Errorf("apply of %s: %s", envs[i].project, results[i])
			continue
		}
		if rows := envs[i].releases(); len(rows) != 1 || rows[0].Phase != "succeeded" || rows[0].Resources != 20 {
			t.Errorf("%s: releases %+v, want one succeeded with 20 resources", envs[i].project, rows)
		}
		if n := len(envs[i].configMapNames()); n != 19 {
			t.Errorf("%s: %d ConfigMaps live, want 19", envs[i].project, n)
		}
	}
}

// TestS3TwoMachinesOneStack: two machines share an S3 backend, each with its
// own embedded Temporal server. While the first applies (waiting at its
// prompt), the second's apply of the same project is refused naming the
// first's run: it cannot see that run, so it must not take it for abandoned.
func TestS3TwoMachinesOneStack(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	a := s3Env(t, srv, srv.Bucket(t))
	b := a.another()
	spec := a.writeSpec("spec.yaml", manyConfigMaps(a.ns, 5))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, wait := a.background(r, "apply", "-f", spec)
	r.Close()
	waitFor(t, "the first apply to await approval", 2*time.Minute, func() bool {
		rows := b.releases()
		return len(rows) == 1 && rows[0].Phase == "awaiting-approval"
	})
	runID, _ := a.release(1)["runID"].(string)
	b.fails([]string{"apply", "--yes", "-f", spec}, "locked by run "+runID)
	fmt.Fprintln(w, "yes")
	w.Close()
	if r := wait(); r.code != 0 {
		t.Fatalf("the first apply: %s", r)
	}
	if rows := b.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases %+v, want revision 1 succeeded alone", rows)
	}
}
