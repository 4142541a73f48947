package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestProjectNameComesFromTheNearestProjectFile(t *testing.T) {
	// Not parallel: t.Chdir changes the working directory of the whole test process.
	root := t.TempDir()
	nested := filepath.Join(root, "stacks", "web")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "project.yaml"), []byte("name: shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir()
	for _, tc := range []struct{ dir, flag, want string }{
		{nested, "", "shop"},
		{root, "", "shop"},
		{nested, "override", "override"},
		{bare, "", filepath.Base(bare)},
	} {
		t.Chdir(tc.dir)
		set := flag.NewFlagSet("kumo", flag.ContinueOnError)
		set.String("project", tc.flag, "")
		got, err := projectName(cli.NewContext(cli.NewApp(), set, nil))
		if err != nil || got != tc.want {
			t.Errorf("in %s with --project %q: %q, %v; want %q", tc.dir, tc.flag, got, err, tc.want)
		}
	}
}

func TestProjectFileWithoutANameIsAnError(t *testing.T) {
	// Not parallel: t.Chdir changes the working directory of the whole test process.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "project.yaml"), []byte("description: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	set := flag.NewFlagSet("kumo", flag.ContinueOnError)
	set.String("project", "", "")
	if _, err := projectName(cli.NewContext(cli.NewApp(), set, nil)); err == nil {
		t.Error("a project.yaml without name was accepted")
	}
}

// TestCommonFlagsBeforeOrAfterTheCommand: the innermost setting wins, and the
// environment counts as set.
func TestCommonFlagsBeforeOrAfterTheCommand(t *testing.T) {
	// Not parallel: it sets KUMO_WORKSPACE in the environment of the whole test process.
	home := t.TempDir()
	t.Setenv("KUMO_WORKSPACE", "") // restored after the test
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--project", "p", "release", "unlock"}, "", "p/default"},
		{[]string{"--workspace", "before", "--project", "p", "release", "unlock"}, "", "p/before"},
		{[]string{"release", "unlock", "--workspace", "after", "--project", "p"}, "", "p/after"},
		{[]string{"--workspace", "outer", "release", "unlock", "--workspace", "inner", "--project", "p"}, "", "p/inner"},
		{[]string{"--project", "p", "release", "unlock"}, "fromenv", "p/fromenv"},
		{[]string{"--workspace", "flag", "--project", "p", "release", "unlock"}, "fromenv", "p/flag"},
	} {
		if err := os.Unsetenv("KUMO_WORKSPACE"); err != nil {
			t.Fatal(err)
		}
		if tc.env != "" {
			if err := os.Setenv("KUMO_WORKSPACE", tc.env); err != nil {
				t.Fatal(err)
			}
		}
		err := newApp().Run(append([]string{"kumo", "--home", home}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want+" has no releases") {
			t.Errorf("kumo %v (KUMO_WORKSPACE=%q): %v; want it to name %s", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestBackendSelection: --backend wins over KUMO_BACKEND, which wins over the
// nearest project.yaml's backend; the worker takes the flag and the environment.
// (Unsupported URLs make the choice visible in the error, before anything runs.)
func TestBackendSelection(t *testing.T) {
	// Not parallel: t.Chdir and KUMO_BACKEND change the whole test process.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "project.yaml"), []byte("name: shop\nbackend: bogus://fromproject\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("KUMO_BACKEND", "")
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"release", "list"}, "", "bogus://fromproject"},
		{[]string{"release", "list"}, "bogus://fromenv", "bogus://fromenv"},
		{[]string{"--backend", "bogus://flag", "release", "list"}, "bogus://fromenv", "bogus://flag"},
		{[]string{"release", "list", "--backend", "bogus://after"}, "", "bogus://after"},
		{[]string{"--backend", "s3://", "release", "list"}, "", `"s3://" names no bucket`},
		{[]string{"worker", "--temporal-address", "127.0.0.1:1", "--insecure-plaintext", "--backend", "bogus://worker"}, "", "bogus://worker"},
		{[]string{"worker", "--temporal-address", "127.0.0.1:1", "--insecure-plaintext"}, "bogus://fromenv", "bogus://fromenv"},
	} {
		if err := os.Setenv("KUMO_BACKEND", tc.env); err != nil {
			t.Fatal(err)
		}
		err := newApp().Run(append([]string{"kumo", "--home", t.TempDir()}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kumo %v (KUMO_BACKEND=%q): %v; want an error naming %s", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestFlagsAfterThePositionalArgument(t *testing.T) {
	var gotArgs, gotList []string
	var gotName string
	app := &cli.App{
		Name: "kumo",
		Commands: []*cli.Command{{
			Name: "create",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "workspace", Aliases: []string{"w"}},
				&cli.StringFlag{Name: "name"},
			},
			Action: func(c *cli.Context) error {
				args, err := positionalArgs(c)
				gotArgs, gotList, gotName = args, c.StringSlice("workspace"), c.String("name")
				return err
			},
		}},
	}
	if err := app.Run([]string{"kumo", "create", "--name", "n", "ROLL", "-w", "dev", "--workspace", "prod,qa", "EXTRA"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(gotArgs, " ") != "ROLL EXTRA" || strings.Join(gotList, " ") != "dev prod qa" || gotName != "n" {
		t.Errorf("args %q, --workspace %q, --name %q; want [ROLL EXTRA], [dev prod qa], n", gotArgs, gotList, gotName)
	}
}
