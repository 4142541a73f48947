package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// holdLock takes home's Temporal lock as a running server does, recording pid.
func holdLock(t *testing.T, home string, pid int) {
	t.Helper()
	dir := TemporalDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strconv.Itoa(pid) + "\n"); err != nil {
		t.Fatal(err)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no `true` to run: %v", err)
	}
	return cmd.Process.Pid
}

func TestLive(t *testing.T) {
	me := os.Getpid()
	info := Info{PID: me, Address: "127.0.0.1:7233", Namespace: "default", UIURL: "http://127.0.0.1:8233"}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home string)
		live  bool
	}{
		{"no server.json", func(t *testing.T, home string) {}, false},
		{"live: the pid holds the lock", func(t *testing.T, home string) {
			holdLock(t, home, me)
			writeOrFail(t, home, info)
		}, true},
		{"killed: the pid is gone", func(t *testing.T, home string) {
			dead := info
			dead.PID = deadPID(t)
			writeOrFail(t, home, dead)
		}, false},
		{"the pid lives but holds no lock (reused pid)", func(t *testing.T, home string) {
			writeOrFail(t, home, info)
		}, false},
		{"another process holds the lock (a one-shot command)", func(t *testing.T, home string) {
			holdLock(t, home, me+1)
			writeOrFail(t, home, info)
		}, false},
		{"not a server's record", func(t *testing.T, home string) {
			holdLock(t, home, me)
			if err := os.WriteFile(infoFile(home), []byte("{half"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			tc.setup(t, home)
			got, err := Live(home)
			if err != nil {
				t.Fatal(err)
			}
			if (got != nil) != tc.live {
				t.Fatalf("Live = %+v, want live %v", got, tc.live)
			}
			if got != nil && *got != info {
				t.Errorf("Live = %+v, want %+v", got, info)
			}
		})
	}
}

func writeOrFail(t *testing.T, home string, info Info) {
	t.Helper()
	if err := writeInfo(home, info); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveInfoOnlyRemovesItsOwn(t *testing.T) {
	home := t.TempDir()
	other := Info{PID: os.Getpid() + 1, Address: "127.0.0.1:7233"}
	writeOrFail(t, home, other)
	if err := removeInfo(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(infoFile(home)); err != nil {
		t.Fatalf("another server's record was removed: %v", err)
	}
	writeOrFail(t, home, Info{PID: os.Getpid(), Address: "127.0.0.1:7233"})
	if err := removeInfo(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(infoFile(home)); !os.IsNotExist(err) {
		t.Fatalf("own record left: %v", err)
	}
}

func TestRunURL(t *testing.T) {
	s := Info{UIURL: "http://127.0.0.1:8233", Namespace: "default"}
	if got, want := s.RunURL("kumo/shop/dev", "r1"), "http://127.0.0.1:8233/namespaces/default/workflows/kumo%2Fshop%2Fdev/r1/history"; got != want {
		t.Errorf("RunURL = %s, want %s", got, want)
	}
	if got, want := s.WorkflowsURL(`KumoProject="shop"`), "http://127.0.0.1:8233/namespaces/default/workflows?query=KumoProject%3D%22shop%22"; got != want {
		t.Errorf("WorkflowsURL = %s, want %s", got, want)
	}
	if (&Info{Namespace: "default"}).RunURL("w", "r") != "" {
		t.Error("a headless server has no run URL")
	}
}
