package embedded

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/quietport"
)

// TestQuietPortsAreOutsideTheOutgoingRange: where the kernel says which ports
// it gives outgoing connections, the ports picked for the server are below
// them, so no connect() can take one between the pick and the server's
// listen; the picks of one Start are distinct.
func TestQuietPortsAreOutsideTheOutgoingRange(t *testing.T) {
	lo, hi, ok := quietport.Range()
	if !ok {
		t.Skip("no ip_local_port_range here")
	}
	p, err := pickPorts(host, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for svc, port := range p.byService() {
		if port < lo || port > hi {
			t.Errorf("%s port %d, want within [%d, %d]", svc, port, lo, hi)
		}
		if seen[port] {
			t.Errorf("port %d picked twice: %+v", port, p)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			t.Errorf("%s port %d is not free once picked: %v", svc, port, err)
			continue
		}
		l.Close()
	}
}

// TestStartRetriesWhenAPortIsTaken: a port taken by another program between
// picking it and the service listening on it made the server panic the whole
// process once started (its worker service served a nil listener); Start now
// sees the failure while the server is made and makes it again with fresh
// ports.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the embedded server")
	}
	var taken net.Listener
	afterPickPorts = func(p servicePorts) {
		if taken != nil {
			return
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p.worker)))
		if err != nil {
			t.Errorf("take the worker's port %d: %v", p.worker, err)
			return
		}
		taken = l
	}
	t.Cleanup(func() {
		afterPickPorts = nil
		if taken != nil {
			_ = taken.Close()
		}
	})
	s, err := Start(ctxTimeout(t, 2*time.Minute), Options{Dir: t.TempDir(), adminWorkflows: testWorkflows})
	if err != nil {
		t.Fatalf("start with the worker's first port taken: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	if taken == nil {
		t.Fatal("the test did not take a port")
	}
	if got := taken.Addr().(*net.TCPAddr).Port; s.ports.worker == got {
		t.Fatalf("the server's worker service is on the taken port %d", got)
	}
	c := connect(t, s)
	if err := run(t, c, "after-retry", TaggedWorkflow, "p").Get(ctxTimeout(t, time.Minute), nil); err != nil {
		t.Fatalf("a workflow on the server started again: %v", err)
	}
}
