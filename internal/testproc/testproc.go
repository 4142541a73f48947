// Package testproc runs a server binary for a test (an OIDC provider, Vault):
// its output in a log file, killed with the test process, stopped when the
// test ends, and waited for until it answers.
package testproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a server a test started.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
	mu   sync.Mutex
}

// Start runs cmd with its output in dir/<name>.log, killed if the test
// process dies, and stopped when t ends.
func Start(t testing.TB, name, dir string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{name: name, cmd: cmd, done: make(chan struct{}), log: filepath.Join(dir, name+".log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

// WaitReady polls ready until it says yes, failing t with the end of the log
// if the process exits first or a minute passes.
func (p *Process) WaitReady(t testing.TB, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start:\n%s", p.name, p.LogTail())
		default:
		}
		if ready() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after a minute:\n%s", p.name, p.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the process: SIGTERM, then SIGKILL after 10 seconds.
func (p *Process) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// LogTail is the last 4 KiB of the process's output.
func (p *Process) LogTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}
