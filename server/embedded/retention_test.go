package embedded

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// TestClosedWorkflowsAreDeletedAfterRetention: a workflow closed in a
// namespace whose retention is a few seconds is gone (history and visibility)
// soon after (Temporal spreads deletions over up to 30 minutes after the
// retention; a second here), on the embedded SQLite database as on any
// Temporal.
func TestClosedWorkflowsAreDeletedAfterRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for Temporal's deletion")
	}
	minRetention = time.Second
	t.Cleanup(func() { minRetention = MinRetention })
	tune := fullTuning
	tune.retentionJitter = time.Second
	s, err := start(ctxTimeout(t, time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows, Retention: 2 * time.Second, Maintenance: true}, tune)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	c := connect(t, s)
	ctx := ctxTimeout(t, 2*time.Minute)
	r := run(t, c, "short-lived", TaggedWorkflow, "p")
	if err := r.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := c.DescribeWorkflowExecution(ctx, "short-lived", r.GetRunID())
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			break
		}
		if err != nil {
			t.Fatalf("describe: %v", err)
		}
		if ctx.Err() != nil {
			t.Fatal("the closed workflow was not deleted after its retention")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestRetentionUpdatesAnExistingNamespace: a server started again with
// another retention sets it on the namespace the first start created; a start
// without one leaves it; one below the minimum is refused.
func TestRetentionUpdatesAnExistingNamespace(t *testing.T) {
	dir := t.TempDir()
	retention := func(want time.Duration, opts Options) {
		t.Helper()
		opts.Dir, opts.adminWorkflows = dir, testWorkflows
		s, err := Start(ctxTimeout(t, time.Minute), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace(), Logger: quietSDKLogger(), ConnectionOptions: ownerConnection(t, s)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		desc, err := c.WorkflowService().DescribeNamespace(context.Background(), &workflowservice.DescribeNamespaceRequest{Namespace: s.Namespace()})
		if err != nil {
			t.Fatal(err)
		}
		if got := desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); got != want {
			t.Errorf("retention %s, want %s", got, want)
		}
	}
	retention(DefaultRetention, Options{})
	retention(36*time.Hour, Options{Retention: 36 * time.Hour})
	retention(36*time.Hour, Options{})
	_, err := Start(ctxTimeout(t, time.Minute), Options{Dir: dir, adminWorkflows: testWorkflows, Retention: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "retention 1m0s") {
		t.Errorf("retention of a minute: %v, want a refusal naming it", err)
	}
}

// TestCompactReturnsFreePages: a database with many free pages is rewritten
// at start to the size of what it holds; one with few is left alone.
func TestCompactReturnsFreePages(t *testing.T) {
	path := filepath.Join(t.TempDir(), dbFileName)
	if err := ensureSchema(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"CREATE TABLE scratch (b BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000) INSERT INTO scratch SELECT randomblob(1024) FROM n",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := compact(path, 1<<20)
	if err != nil || c.Compacted() {
		t.Fatalf("a database without free pages: %+v %v, want it left alone", c, err)
	}
	if db, err = sql.Open("sqlite", "file:"+path+"?mode=rw"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM scratch"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err = compact(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Compacted() || c.Free < 4<<20 || c.After > c.Before-4<<20 {
		t.Errorf("after deleting 4 MiB: %+v, want those bytes returned", c)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != c.After {
		t.Errorf("file is %d bytes, compact reported %d", fi.Size(), c.After)
	}
	// The compacted database still starts.
	s, err := Start(ctxTimeout(t, time.Minute), Options{Dir: filepath.Dir(path), adminWorkflows: testWorkflows})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}
