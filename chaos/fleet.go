package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kumoproj/kumo/internal/quietport"
	"github.com/kumoproj/kumo/server"
)

// fleet is `kumo server` on one home and separate `kumo worker` processes
// polling it; runs are started detached in the server and executed by any of
// them (the server has a worker of its own).
type fleet struct {
	k       *kumo
	home    string
	address string // fixed, so workers reconnect to a restarted server
	server  *proc
	workers []*proc
}

func newFleet(k *kumo, home string, workers int) (*fleet, error) {
	ports, err := quietport.Pick("127.0.0.1", 1)
	if err != nil {
		return nil, err
	}
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	f := &fleet{k: k, home: home, address: address, workers: make([]*proc, workers)}
	if err := f.startServer(); err != nil {
		return nil, err
	}
	for i := range f.workers {
		if err := f.startWorker(i); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// names of the processes a kill may hit: "server", "worker-1", ...
func (f *fleet) names() []string {
	names := []string{"server"}
	for i := range f.workers {
		names = append(names, fmt.Sprintf("worker-%d", i+1))
	}
	return names
}

func (f *fleet) proc(name string) *proc {
	if name == "server" {
		return f.server
	}
	var i int
	fmt.Sscanf(name, "worker-%d", &i)
	return f.workers[i-1]
}

func (f *fleet) restart(name string) error {
	if name == "server" {
		return f.startServer()
	}
	var i int
	fmt.Sscanf(name, "worker-%d", &i)
	return f.startWorker(i - 1)
}

// startServer starts kumo server and waits until it has recorded itself in
// server.json (it then serves Temporal and its worker polls).
func (f *fleet) startServer() error {
	p, err := f.k.start("server", f.home, "", "server", "--address", f.address, "--headless")
	if err != nil {
		return err
	}
	f.server = p
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("kumo server exited with %d (see %s)", p.cmd.ProcessState.ExitCode(), filepath.Join(f.k.logs, "server.log"))
		}
		var info server.Info
		data, err := os.ReadFile(filepath.Join(f.home, server.FileName))
		if err == nil && json.Unmarshal(data, &info) == nil && info.PID == p.cmd.Process.Pid {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.kill()
	return fmt.Errorf("kumo server did not record itself in %s within 2m", server.FileName)
}

// startWorker starts kumo worker and waits until it polls, so that the next
// kill (of the server, say) never lands in the middle of its start: a worker
// whose Temporal goes away while it connects exits at once, by design.
func (f *fleet) startWorker(i int) error {
	name := fmt.Sprintf("worker-%d", i+1)
	log := filepath.Join(f.k.logs, name+".log")
	before := fileSize(log)
	p, err := f.k.start(name, f.home, "", "--temporal-address", f.address, "worker")
	if err != nil {
		return err
	}
	f.workers[i] = p
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited with %d while starting (see %s)", name, p.cmd.ProcessState.ExitCode(), log)
		}
		if data, err := os.ReadFile(log); err == nil && int64(len(data)) > before && strings.Contains(string(data[before:]), "kumo worker polling") {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.kill()
	return fmt.Errorf("%s did not start polling within 2m (see %s)", name, log)
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// check says which process died without being killed, and starts it again.
func (f *fleet) check() error {
	for _, name := range f.names() {
		if p := f.proc(name); p.exited() {
			code := p.cmd.ProcessState.ExitCode()
			if err := f.restart(name); err != nil {
				return err
			}
			return fmt.Errorf("%s exited by itself with %d (see %s.log)", name, code, name)
		}
	}
	return nil
}

func (f *fleet) stop() {
	for _, w := range f.workers {
		if w != nil {
			w.kill()
		}
	}
	if f.server != nil {
		f.server.kill()
	}
}
