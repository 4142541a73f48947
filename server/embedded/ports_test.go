package embedded

import (
	"net"
	"strconv"
	"testing"

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
