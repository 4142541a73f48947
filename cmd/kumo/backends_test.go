package main

import (
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/pgtest"
	"github.com/kumoproj/kumo/internal/s3test"
	"github.com/kumoproj/kumo/internal/tfstatetest"
)

// pgEnv is a machine whose records live in a database of srv, configured as a
// user would: --backend postgres://user@host/db, the password in PGPASSWORD.
func pgEnv(t *testing.T, srv *pgtest.Server) *env {
	t.Helper()
	e := newEnv(t)
	e.flags = []string{"--backend", srv.BareURL(srv.NewDatabase(t))}
	e.environ = srv.Env()
	return e
}

// httpEnv is a machine whose records live in a Terraform http state service,
// with basic auth from TF_HTTP_USERNAME and TF_HTTP_PASSWORD.
func httpEnv(t *testing.T) *env {
	t.Helper()
	srv := tfstatetest.Start(t, tfstatetest.Basic("kumo", "state-pw"))
	e := newEnv(t)
	e.flags = []string{"--backend", srv.URL}
	e.environ = srv.Env()
	return e
}

// TestBackendMigrate: two applies recorded in the local home are migrated to
// PostgreSQL, from there to S3, from there to the Terraform http service and
// back to a new local directory; at every stop `release list` and `release
// show` print exactly what they printed at the start. A migration into a
// backend that holds different records is refused, and so is one while a run
// holds a stack.
func TestBackendMigrate(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	s3srv := s3test.Start(t)
	state := tfstatetest.Start(t, tfstatetest.Basic("kumo", "state-pw"))
	a := newEnv(t)
	spec := a.writeSpec("spec.yaml", "resources:\n"+namespace(a.ns)+configMap(a.ns, "one", "dependsOn: [v1:Namespace:"+a.ns+"]"))
	a.ok("apply", "--yes", "-f", spec)
	spec2 := a.writeSpec("spec2.yaml", "resources:\n"+namespace(a.ns)+
		configMap(a.ns, "one", "dependsOn: [v1:Namespace:"+a.ns+"]")+configMap(a.ns, "two", "dependsOn: [v1:Namespace:"+a.ns+"]"))
	a.ok("apply", "--yes", "-f", spec2)
	views := func(e *env) string {
		var b strings.Builder
		for _, args := range [][]string{
			{"release", "list"}, {"release", "list", "-o", "json"},
			{"release", "show", "--revision", "1"}, {"release", "show", "--revision", "2", "-o", "json", "--reveal"},
		} {
			b.WriteString("$ kumo " + strings.Join(args, " ") + "\n" + e.ok(args...).stdout)
		}
		return b.String()
	}
	want := views(a)

	local := "file://" + a.home
	pgURL := pg.BareURL(pg.NewDatabase(t))
	bucket := s3srv.Bucket(t)
	s3URL := "s3://" + bucket + "/team/kumo"
	back := "file://" + t.TempDir()
	environ := append(append(pg.Env(), s3srv.Env()...), state.Env()...)
	at := func(url string) *env {
		e := *a
		e.flags = []string{"--backend", url}
		e.environ = environ
		return &e
	}
	migrate := func(from, to string) result {
		e := at(from)
		e.project = "" // every record, not the project's
		return e.ok("backend", "migrate", "--from", from, "--to", to)
	}
	for _, hop := range [][2]string{{local, pgURL}, {pgURL, s3URL}, {s3URL, state.URL}, {state.URL, back}} {
		r := migrate(hop[0], hop[1])
		if !strings.Contains(r.stdout, "Verified: all") {
			t.Fatalf("migrate %s -> %s: %s", hop[0], hop[1], r)
		}
		if got := views(at(hop[1])); got != want {
			t.Fatalf("after migrating to %s, the releases read differently:\n%s\nwant:\n%s", hop[1], got, want)
		}
	}
	if strings.Contains(migrate(local, pgURL).stdout, "0 were already there") {
		t.Fatal("a second migration rewrote records")
	}

	// A destination with a different history is refused, naming the record.
	other := at(pg.BareURL(pg.NewDatabase(t)))
	other.ok("apply", "--yes", "-f", spec)
	at(local).fails([]string{"backend", "migrate", "--from", local, "--to", other.flags[1]}, "already holds a different record", "refusing to overwrite")

	// A run that holds the stack (its release is still applying) stops it.
	home, err := client.OpenBackend(t.Context(), client.Options{Home: a.home})
	if err != nil {
		t.Fatal(err)
	}
	if err := home.CreateRelease(t.Context(), backendtest.Release(a.project, "default", 3)); err != nil {
		t.Fatal(err)
	}
	at(local).fails([]string{"backend", "migrate", "--from", local, "--to", pg.BareURL(pg.NewDatabase(t))},
		"workspace default is held by run", "revision 3 is applying")
}

// TestBackendURLsNeverPrintPasswords: a URL with a password is refused before
// anything is opened, and the password is not echoed.
func TestBackendURLsNeverPrintPasswords(t *testing.T) {
	t.Parallel()
	e := &env{t: t, home: t.TempDir(), project: "p"}
	for _, url := range []string{"postgres://kumo:hunter2@127.0.0.1:1/kumo", "https://kumo:hunter2@state.example/kumo"} {
		ctx := t.Context()
		cmd := e.commandNoCluster(ctx, "--backend", url, "release", "list")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "holds a password") || strings.Contains(string(out), "hunter2") {
			t.Fatalf("kumo --backend %s: %v\n%s", strings.Replace(url, "hunter2", "***", 1), err, out)
		}
	}
}
