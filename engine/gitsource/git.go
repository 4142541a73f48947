package gitsource

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Limits bound what one fetch may bring onto the worker.
type Limits struct {
	// FetchBytes bounds the git objects one shallow fetch downloads.
	FetchBytes int64
	// TreeBytes and Files bound the checked-out tree.
	TreeBytes int64
	Files     int
	// Timeout bounds one git command.
	Timeout time.Duration
}

// DefaultLimits fit a repository of configuration, not one of binaries.
var DefaultLimits = Limits{FetchBytes: 256 << 20, TreeBytes: 512 << 20, Files: 50000, Timeout: 5 * time.Minute}

// Git runs git for sources. Its zero value uses "git" from PATH, DefaultLimits
// and no cache (Fetch then fails).
type Git struct {
	// Binary is the git executable (default: git on PATH).
	Binary string
	// Cache is the directory commits are fetched into, one directory per
	// repository and commit.
	Cache  string
	Limits Limits
}

func (g *Git) limits() Limits {
	l := g.Limits
	d := DefaultLimits
	if l.FetchBytes <= 0 {
		l.FetchBytes = d.FetchBytes
	}
	if l.TreeBytes <= 0 {
		l.TreeBytes = d.TreeBytes
	}
	if l.Files <= 0 {
		l.Files = d.Files
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	return l
}

// env is the environment git runs with for s: nothing from the worker's own
// git configuration or credentials helpers, no prompt, only the transports a
// source may use, and s's credential passed as configuration in the
// environment (readable by the worker's account only, unlike a command line).
func env(s *Source) ([]string, error) {
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.TempDir(),
		"LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_ALLOW_PROTOCOL=https:http:ssh",
		"GIT_PROTOCOL_FROM_USER=0",
	}
	cfg := [][2]string{
		{"protocol.version", "2"}, // fetch by commit ID (want <oid>) needs v2
		{"credential.helper", ""},
		{"core.askPass", ""},
		{"http.followRedirects", "initial"},
	}
	if f := s.Auth.TokenFile; f != "" {
		tok, err := readSecret(f)
		if err != nil {
			return nil, fmt.Errorf("source %s: --auth token-file: %w", s.Name, err)
		}
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
		cfg = append(cfg, [2]string{"http.extraHeader", "Authorization: Basic " + basic})
	}
	if t, _ := classify(s.URL); t == transportSSH {
		cmd := "ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile='" + s.KnownHosts + "'"
		if k := s.Auth.SSHKeyFile; k != "" {
			if _, err := os.Stat(k); err != nil {
				return nil, fmt.Errorf("source %s: --auth ssh-key: %w", s.Name, err)
			}
			cmd += " -o IdentitiesOnly=yes -i '" + k + "'"
		}
		if _, err := os.Stat(s.KnownHosts); err != nil {
			return nil, fmt.Errorf("source %s: --known-hosts: %w", s.Name, err)
		}
		e = append(e, "GIT_SSH_COMMAND="+cmd)
	}
	e = append(e, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(cfg)))
	for i, kv := range cfg {
		e = append(e, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return e, nil
}

// readSecret reads a credential file: one line, not empty.
func readSecret(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	if len(data) > 16<<10 {
		return "", fmt.Errorf("%s: %d bytes, not a token", file, len(data))
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" || strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("%s: want one line holding the token", file)
	}
	return tok, nil
}

// maxStderr bounds the part of git's error output an error carries.
const maxStderr = 2048

// run runs git in dir with s's environment; its error carries git's last
// words (git never prints the credentials: they are in a header or a file).
func (g *Git) run(ctx context.Context, s *Source, dir string, stdout io.Writer, args ...string) error {
	return g.runWith(ctx, s, dir, nil, stdout, nil, args...)
}

// runWith is run with standard input and more environment (for verify).
func (g *Git) runWith(ctx context.Context, s *Source, dir string, stdin io.Reader, stdout io.Writer, extra []string, args ...string) error {
	e, err := env(s)
	if err != nil {
		return err
	}
	e = append(e, extra...)
	ctx, cancel := context.WithTimeout(ctx, g.limits().Timeout)
	defer cancel()
	bin := g.Binary
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout = dir, e, stdin, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: maxStderr}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ctx.Err() != nil {
			msg = fmt.Sprintf("%v (%s)", ctx.Err(), msg)
		}
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git %s %s: %s", args[0], s.URL, msg)
	}
	return nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// ErrRefNotFound: the remote has no branch or tag of that name.
var ErrRefNotFound = errors.New("ref not found")

// Resolve asks the remote which commit s.Ref is at: one ls-remote. A short
// name is a branch first, then a tag (an annotated tag gives the commit it
// points to); a full name (refs/...) is taken as it is.
func (g *Git) Resolve(ctx context.Context, s *Source) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	want := []string{s.Ref}
	if !strings.HasPrefix(s.Ref, "refs/") {
		want = []string{"refs/heads/" + s.Ref, "refs/tags/" + s.Ref}
	}
	var out bytes.Buffer
	args := []string{"ls-remote", "--", s.URL}
	for _, name := range want {
		args = append(args, name, name+"^{}")
	}
	if err := g.run(ctx, s, os.TempDir(), &out, args...); err != nil {
		return "", err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok && hexID.MatchString(id) {
			refs[name] = id
		}
	}
	for _, name := range want {
		if id, ok := refs[name+"^{}"]; ok { // annotated tag: the commit it points to
			return id, nil
		}
		if id, ok := refs[name]; ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("source %s: %s has no branch or tag %q: %w", s.Name, s.URL, s.Ref, ErrRefNotFound)
}
