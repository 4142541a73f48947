package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// DefaultGeneratorTimeout bounds one external generator call.
const DefaultGeneratorTimeout = 60 * time.Second

// maxOutput bounds what is kept of a generator's stdout and stderr.
const maxOutput = 16 << 20

// ExecRunner runs external generators as processes: the request as JSON on stdin,
// the response read from stdout, stderr kept for the run log. It runs only
// the generators Trust allows, with Trust's environment.
type ExecRunner struct {
	// Timeout bounds each call (default DefaultGeneratorTimeout).
	Timeout time.Duration
	// Trust says which generators may run; its zero value trusts none.
	Trust Trust
}

// Check reports, before any call runs, a call whose generator is not trusted
// (an *UntrustedError) or cannot be found.
func (r ExecRunner) Check(call Call) error {
	_, err := r.Trust.Check(call)
	return err
}

// Run starts call.Command in call.Dir, if Trust allows it (checked again
// here: Check is advisory for callers that run one call), with only Trust's
// environment. A relative executable path (./gen) is relative to call.Dir; a
// bare name is looked up on PATH; the file that was checked, symlinks
// resolved, is the one run. On timeout or cancellation the whole process
// group is killed, so a generator's own children do not outlive it.
func (r ExecRunner) Run(ctx context.Context, call Call) (CallResult, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultGeneratorTimeout
	}
	input, err := json.Marshal(call.Request)
	if err != nil {
		return CallResult{}, fmt.Errorf("encode request: %w", err)
	}
	exe, name, err := r.Trust.Open(call)
	if err != nil {
		return CallResult{}, err
	}
	defer exe.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, call.Command[1:]...)
	if runtime.GOOS == "linux" {
		// Run the file that was checked, open as the child's fd 3, rather
		// than whatever the path names by then. A script's interpreter opens
		// it there too (fd 3 stays open across exec).
		cmd.Path, cmd.ExtraFiles = "/proc/self/fd/3", []*os.File{exe}
	}
	cmd.Args[0] = call.Command[0]
	cmd.Dir = call.Dir
	// Never the worker's whole environment: it holds cloud and Temporal
	// credentials. A nil Env would mean all of it.
	cmd.Env = append([]string{}, r.Trust.Env()...)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// After a kill, don't wait forever for grandchildren holding the pipes open.
	cmd.WaitDelay = time.Second
	start := time.Now()
	err = cmd.Run()
	res := CallResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Elapsed: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		if stdout.truncated {
			return res, fmt.Errorf("printed more than %d MiB on stdout", maxOutput>>20)
		}
		return res, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, fmt.Errorf("timed out after %s (--generator-timeout)", timeout)
	case ctx.Err() != nil:
		return res, ctx.Err()
	case errors.As(err, &exitErr):
		return res, fmt.Errorf("exited with status %d%s", exitErr.ExitCode(), firstLine(stderr.Bytes()))
	default:
		return res, fmt.Errorf("could not run %s: %w", strings.Join(call.Command, " "), err)
	}
}

// firstLine is ": <the first non-empty line of stderr>", for the error message;
// the whole stderr goes to the run log.
func firstLine(stderr []byte) string {
	for _, line := range strings.Split(string(stderr), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return ": " + line
		}
	}
	return ""
}

// capped is a buffer that keeps the first maxOutput bytes.
type capped struct {
	bytes.Buffer
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room < len(p) {
		c.truncated = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
