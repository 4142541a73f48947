package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenCommands: create prints the token once and records it without the
// token; list shows it (table and JSON) and never the token; revoke marks it;
// a TTL is required and bounded.
func TestTokenCommands(t *testing.T) {
	t.Parallel()
	e := &env{t: t, home: t.TempDir(), project: "tokens"}
	run := func(args ...string) result {
		t.Helper()
		cmd := e.commandNoCluster(t.Context(), args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		if err != nil {
			r.code = cmd.ProcessState.ExitCode()
			if r.code == 0 {
				t.Fatal(err)
			}
		}
		return r
	}
	r := run("token", "create", "--subject", "ci-deployer", "--group", "deployers", "--ttl", "8h")
	if r.code != 0 {
		t.Fatalf("token create: %s", r)
	}
	tok := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(tok, "kumo_") || strings.Contains(tok, "\n") {
		t.Fatalf("token create printed %q, want one kumo_ token", r.stdout)
	}
	secret := tok[strings.LastIndex(tok, ".")+1:]
	filepath.WalkDir(filepath.Join(e.home, "auth"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
				t.Errorf("%s holds the token", path)
			}
		}
		return nil
	})

	r = run("token", "list", "-o", "json")
	var recs []struct {
		ID, Subject, State string
		Groups             []string
		Revoked            *string
	}
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil || len(recs) != 1 {
		t.Fatalf("token list -o json: %v\n%s", err, r)
	}
	if recs[0].Subject != "ci-deployer" || recs[0].State != "active" || strings.Join(recs[0].Groups, ",") != "deployers" {
		t.Errorf("listed %+v", recs[0])
	}
	if strings.Contains(r.stdout, secret) {
		t.Error("token list prints the token")
	}
	id := recs[0].ID

	if r = run("token", "revoke", id); r.code != 0 || !strings.Contains(r.stdout, id+" (ci-deployer) revoked") {
		t.Fatalf("token revoke: %s", r)
	}
	r = run("token", "list")
	if !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "revoked") {
		t.Errorf("token list after revoke: %s", r)
	}
	// Both changes are in the audit log, without the token.
	// (Not through run: its --project would keep to that project's entries.)
	out, err := exec.Command(kumoPath(t), "--home", e.home, "audit", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kumo audit: %v\n%s", err, out)
	}
	r = result{stdout: string(out)}
	for _, want := range []string{`"token create"`, `"token revoke"`, "token " + id + " for ci-deployer"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, r)
		}
	}
	if strings.Contains(r.stdout, secret) {
		t.Error("the audit log holds the token")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "create", "--subject", "x"}, "--ttl is required"},
		{[]string{"token", "create", "--subject", "x", "--ttl", "91d"}, "90 days"},
		{[]string{"token", "revoke", "tnope"}, "no such token"},
	} {
		r := run(c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("kumo %s: want failure saying %q: %s", strings.Join(c.args, " "), c.want, r)
		}
	}
}
