// Package gitrev finds the commit a directory's git checkout is at, by
// reading the repository's files (HEAD, refs, packed-refs) rather than
// running git: the release of a stack generated from a checkout records its
// source commit, and the CLI may run where no git binary is.
package gitrev

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrNotRepo: the directory is not inside a git work tree.
var ErrNotRepo = errors.New("not in a git repository")

var hexID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// Head returns the commit ID of HEAD in the git work tree holding dir (a
// subdirectory of it is fine): the branch's commit, or a detached HEAD's.
// A linked worktree (.git a file naming its gitdir) is followed to the
// common directory for branches. ErrNotRepo when no .git is found above
// dir; an error naming the file for a repository it cannot read.
func Head(dir string) (string, error) {
	gitDir, err := find(dir)
	if err != nil {
		return "", err
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", err
	}
	ref := strings.TrimSpace(string(head))
	for range 10 { // symbolic refs may chain; a loop is a broken repository
		name, symbolic := strings.CutPrefix(ref, "ref: ")
		if !symbolic {
			if !hexID.MatchString(ref) {
				return "", fmt.Errorf("%s: HEAD is %q, not a commit ID", gitDir, ref)
			}
			return ref, nil
		}
		if ref, err = resolve(gitDir, strings.TrimSpace(name)); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: HEAD's references loop", gitDir)
}

// find walks up from dir to the directory holding .git and returns the git
// directory (.git itself, or the one a .git file names).
func find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil:
			data, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if !ok {
				return "", fmt.Errorf("%s: not a gitdir file", p)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return target, nil
		case !errors.Is(err, os.ErrNotExist):
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s: %w", abs, ErrNotRepo)
		}
	}
}

// resolve reads a reference (refs/heads/main) from the git directory, its
// common directory (a linked worktree's branches live there) or
// packed-refs. It returns the value: a commit ID or another "ref: ...".
func resolve(gitDir, name string) (string, error) {
	if strings.Contains(name, "..") {
		return "", fmt.Errorf("%s: reference %q", gitDir, name)
	}
	dirs := []string{gitDir}
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		dirs = append(dirs, common)
	}
	for _, d := range dirs {
		if v, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(name))); err == nil {
			return strings.TrimSpace(string(v)), nil
		}
	}
	for _, d := range dirs {
		if id, ok, err := packed(filepath.Join(d, "packed-refs"), name); err != nil || ok {
			return id, err
		}
	}
	return "", fmt.Errorf("%s: reference %s not found (a branch with no commits yet?)", gitDir, name)
}

// packed looks name up in a packed-refs file ("<id> <name>" lines).
func packed(path, name string) (string, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, ref, ok := strings.Cut(sc.Text(), " ")
		if ok && ref == name && hexID.MatchString(id) {
			return id, true, nil
		}
	}
	return "", false, sc.Err()
}
