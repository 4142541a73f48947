package gitrev

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs the real git in dir; the tests compare Head with what git says.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary to compare with")
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	stack := filepath.Join(repo, "shop", "dev")
	if err := os.MkdirAll(stack, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stack, "stack.yaml"), []byte("name: dev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Head(stack); err == nil {
		t.Error("a branch with no commit has a head")
	}
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "one")
	check := func(dir, what string) {
		t.Helper()
		got, err := Head(dir)
		if want := git(t, dir, "rev-parse", "HEAD"); err != nil || got != want {
			t.Errorf("%s: Head = %q, %v; git says %s", what, got, err, want)
		}
	}
	check(stack, "loose branch ref, from a subdirectory")
	git(t, repo, "pack-refs", "--all")
	check(stack, "packed ref")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, repo, "checkout", "-q", "--detach", "HEAD~1")
	check(stack, "detached HEAD")
	git(t, repo, "checkout", "-q", "main")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	git(t, wt, "commit", "-q", "--allow-empty", "-m", "three")
	check(wt, "linked worktree")

	if _, err := Head(t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("outside a repository: %v, want ErrNotRepo", err)
	}
}
