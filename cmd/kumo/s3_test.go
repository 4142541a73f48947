package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/s3test"
)

// s3Env is a machine whose records live in bucket/prefix on srv, configured the
// way a user would: --backend plus the standard AWS environment.
func s3Env(t *testing.T, srv *s3test.Server, bucket string) *env {
	t.Helper()
	e := newEnv(t)
	e.flags = []string{"--backend", "s3://" + bucket + "/team/kumo"}
	e.environ = srv.Env()
	return e
}

// another is the same user on another machine: its own KUMO_HOME (so its own
// embedded Temporal server), the same backend, project and cluster.
func (e *env) another() *env {
	other := *e
	other.home = e.t.TempDir()
	return &other
}

// TestS3BackendIsSharedBetweenMachines: an apply recorded in S3 is seen from a
// second KUMO_HOME, which continues the revision numbers; nothing is recorded in
// either home.
func TestS3BackendIsSharedBetweenMachines(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	a := s3Env(t, srv, srv.Bucket(t))
	b := a.another()
	spec := a.writeSpec("spec.yaml", "resources:\n"+namespace(a.ns)+configMap(a.ns, "one", "dependsOn: [v1:Namespace:"+a.ns+"]"))
	a.ok("apply", "--yes", "-f", spec)

	rows := b.releases()
	if len(rows) != 1 || rows[0].Revision != 1 || rows[0].Phase != "succeeded" || rows[0].Resources != 2 {
		t.Fatalf("release list on the second machine: %+v, want revision 1 succeeded with 2 resources", rows)
	}
	if show := b.release(1); show["runID"] != a.release(1)["runID"] {
		t.Fatalf("the machines see different revision 1s: %v vs %v", show["runID"], a.release(1)["runID"])
	}

	spec2 := b.writeSpec("spec2.yaml", "resources:\n"+namespace(a.ns)+
		configMap(a.ns, "one", "dependsOn: [v1:Namespace:"+a.ns+"]")+configMap(a.ns, "two", "dependsOn: [v1:Namespace:"+a.ns+"]"))
	b.ok("apply", "--yes", "-f", spec2)
	for _, e := range []*env{a, b} {
		rows := e.releases()
		if len(rows) != 2 || rows[1].Revision != 2 || rows[1].Phase != "succeeded" || rows[1].Resources != 3 {
			t.Fatalf("release list: %+v, want revisions 1 and 2, both succeeded", rows)
		}
	}
	if names := a.configMapNames(); strings.Join(names, ",") != "one,two" {
		t.Fatalf("ConfigMaps live: %v", names)
	}
	// The destroy from the first machine is revision 3 and deletes what the second applied.
	a.ok("destroy", "--yes")
	if rows := b.releases(); len(rows) != 3 || rows[2].Operation != "destroy" || rows[2].Phase != "succeeded" {
		t.Fatalf("release list after destroy: %+v", rows)
	}
	for _, e := range []*env{a, b} {
		for _, dir := range []string{"releases", "specs"} {
			if _, err := os.Stat(filepath.Join(e.home, dir)); !os.IsNotExist(err) {
				t.Errorf("%s/%s exists (%v): records went to KUMO_HOME instead of S3", e.home, dir, err)
			}
		}
	}
}

// TestS3BackendMisconfigured: a missing bucket, refused or missing credentials,
// or an unreachable endpoint fail before any run starts, naming the bucket.
func TestS3BackendMisconfigured(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	e := s3Env(t, srv, bucket)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns))

	missing := *e
	missing.flags = []string{"--backend", "s3://no-such-bucket/x"}
	missing.fails([]string{"apply", "--yes", "-f", spec}, `bucket "no-such-bucket"`, "does not exist")

	denied := *e
	denied.environ = append(srv.Env(), "AWS_SECRET_ACCESS_KEY=wrong")
	denied.fails([]string{"apply", "--yes", "-f", spec}, `bucket "`+bucket+`"`, "access denied", "AWS_ACCESS_KEY_ID")

	anonymous := *e
	anonymous.environ = append(srv.Env(), "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_EC2_METADATA_DISABLED=true")
	anonymous.fails([]string{"apply", "--yes", "-f", spec}, `bucket "`+bucket+`"`, "no AWS credentials found")

	unreachable := *e
	unreachable.flags = append(unreachable.flags, "--s3-endpoint", "http://127.0.0.1:1")
	unreachable.fails([]string{"release", "list"}, `bucket "`+bucket+`"`, "127.0.0.1:1")

	for _, m := range []*env{&missing, &denied, &anonymous, &unreachable} {
		if _, err := os.Stat(filepath.Join(m.home, "temporal")); !os.IsNotExist(err) {
			t.Errorf("a run was started (embedded Temporal in %s) despite the bad backend", m.home)
		}
	}
	if _, err := os.Stat(srv.ObjectPath(bucket, "team")); !os.IsNotExist(err) {
		t.Errorf("something was written to the bucket: %v", err)
	}
}

// TestS3ServerStoppedMidApply: the S3 server dies in the middle of an apply and
// comes back on the same data a few seconds later. The run retries and either
// completes or fails clearly; no revision is lost or duplicated, and the next
// apply continues from it.
func TestS3ServerStoppedMidApply(t *testing.T) {
	t.Parallel()
	// A chain applies a few milliseconds a ConfigMap as chain steps
	// (chainFromStart), recording every 25: long enough to be stopped
	// half-way.
	const n = 300
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	e := s3Env(t, srv, bucket)
	spec := e.writeSpec("chain.yaml", chainSpec(e.ns, n))
	_, wait := e.background(nil, "apply", "--yes", "--parallelism", "1", "-f", spec)

	waitFor(t, "the apply to get going", 2*time.Minute, func() bool { return len(e.configMapNames()) >= 10 })
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	stoppedAt := len(e.configMapNames())
	time.Sleep(3 * time.Second) // the outage
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	r := wait()
	t.Logf("S3 stopped after %d of %d ConfigMaps were applied; apply exited %d", stoppedAt, n, r.code)
	if stoppedAt >= n {
		t.Fatalf("the apply applied everything before the server was stopped")
	}
	rows := e.releases()
	if len(rows) != 1 || rows[0].Revision != 1 {
		t.Fatalf("releases after the outage: %+v, want exactly revision 1", rows)
	}
	switch {
	case r.code == 0:
		e.checkStateMatchesCluster(n)
	case rows[0].Phase != "failed" || !strings.Contains(r.stderr, bucket):
		t.Fatalf("apply failed without a clear error or a failed release (%+v): %s", rows[0], r)
	}
	// Either way, the next apply is revision 2 and leaves everything recorded.
	e.ok("apply", "--yes", "-f", spec)
	if rows := e.releases(); len(rows) != 2 || rows[1].Revision != 2 || rows[1].Phase != "succeeded" {
		t.Fatalf("releases after a second apply: %+v", rows)
	}
	e.checkStateMatchesCluster(n)
}

// TestS3BackendWithRemoteWorkers: workers of an existing Temporal cluster take
// the same --backend (here from KUMO_BACKEND) and write the CLI's records.
func TestS3BackendWithRemoteWorkers(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	e := s3Env(t, srv, bucket)
	address := temporalServer(t)
	w := e.another()
	w.flags = address.flags()
	w.environ = append(srv.Env(), "KUMO_BACKEND=s3://"+bucket+"/team/kumo")
	w.worker()
	e.flags = append(e.flags, address.flags()...)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+configMap(e.ns, "a", "dependsOn: [v1:Namespace:"+e.ns+"]"))
	e.ok("apply", "--yes", "-f", spec)
	if rows := e.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" || rows[0].Resources != 2 {
		t.Fatalf("releases: %+v", rows)
	}
	if _, err := os.Stat(filepath.Join(w.home, "releases")); !os.IsNotExist(err) {
		t.Fatalf("the worker wrote to its KUMO_HOME (%v)", err)
	}
}
