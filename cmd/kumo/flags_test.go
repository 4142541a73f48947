package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestProjectNameComesFromTheNearestProjectFile(t *testing.T) {
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
