package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one child: etcd, kube-apiserver or kube-controller-manager.
type process struct {
	Name string `json:"name"`
	Bin  string `json:"bin"`
	PID  int    `json:"pid"`
	Log  string `json:"log"`

	cmd  *exec.Cmd     // nil for a process found through the state file
	done chan struct{} // closed when cmd has exited; nil without cmd
	err  error         // cmd.Wait's result, valid after done
}

// startProcess runs bin with args, output appended to logPath. A detached process
// gets its own session, so it outlives the caller; otherwise it is killed when the
// caller dies (Linux) and belongs to the caller's process group.
func startProcess(name, bin string, args []string, logPath string, detach bool) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n==== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(append([]string{bin}, args...), " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf // *os.File: handed to the child as is, no copying goroutine
	cmd.SysProcAttr = sysProcAttr(detach)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{Name: name, Bin: bin, PID: cmd.Process.Pid, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, with its error when we started it.
func (p *process) exited() (bool, error) {
	if p.done != nil {
		select {
		case <-p.done:
			if p.err == nil {
				return true, errors.New("exited with status 0")
			}
			return true, p.err
		default:
			return false, nil
		}
	}
	return !p.alive(), errors.New("not running")
}

// alive reports whether the process is still running. For a process found through
// the state file it also checks (where /proc exists) that the pid still runs the
// same binary, so a reused pid is not mistaken for it.
func (p *process) alive() bool {
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	if p.PID <= 0 || syscall.Kill(p.PID, 0) != nil {
		return false
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID)); err == nil {
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if string(argv0) != p.Bin {
			return false
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID)); err == nil {
			// A zombie (state Z) has exited; only its parent has not reaped it yet.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				return false
			}
		}
	}
	return true
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs and waits.
func (p *process) stop(grace time.Duration) error {
	if !p.alive() {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGTERM)
	if p.wait(grace) {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	if p.wait(10 * time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.PID)
}

func (p *process) wait(d time.Duration) bool {
	if p.done != nil {
		select {
		case <-p.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return !p.alive()
}

// logTail returns the last lines of the process's log, for error messages.
func (p *process) logTail() string {
	return tail(p.Log, 40, 6<<10)
}

func tail(path string, lines, maxBytes int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - int64(maxBytes)
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if off > 0 && len(ls) > 1 {
		ls = ls[1:] // first line is probably cut
	}
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}
