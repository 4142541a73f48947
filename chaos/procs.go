package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// kumo runs the kumo binary on one home, as a user would.
type kumo struct {
	bin        string
	kubeconfig string
	logs       string // directory for the output of background processes
}

// proc is a kumo process running in the background.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	out  *os.File
}

func (k *kumo) command(ctx context.Context, home, project string, args ...string) *exec.Cmd {
	global := []string{"--home", home, "--kubeconfig", k.kubeconfig}
	if project != "" {
		global = append(global, "--project", project)
	}
	cmd := exec.CommandContext(ctx, k.bin, append(global, args...)...)
	cmd.Env = append(os.Environ(), "KUMO_HOME="+home)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// result of a kumo command run to its end.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, tailLines(r.stdout, 15), tailLines(r.stderr, 15))
}

// run runs kumo to its end (at most timeout).
func (k *kumo) run(home, project string, timeout time.Duration, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := k.command(ctx, home, project, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.code, r.stderr = -1, r.stderr+fmt.Sprintf("\n(killed: still running after %s)", timeout)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// start starts kumo in the background, its output appended to logs/<name>.log.
func (k *kumo) start(name, home, project string, args ...string) (*proc, error) {
	out, err := os.OpenFile(filepath.Join(k.logs, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\n=== %s kumo %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
	cmd := k.command(context.Background(), home, project, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), out: out}
	go func() {
		_ = cmd.Wait() // the exit code is read from ProcessState
		out.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitCode waits for the process to end (at most timeout); -1 if it did not.
func (p *proc) exitCode(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		fmt.Fprintf(os.Stderr, "chaos: kill %s: %v\n", p.name, err)
	}
	<-p.done
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
