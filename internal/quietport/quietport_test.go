package quietport

import (
	"net"
	"strconv"
	"testing"
)

// TestPickIsOutsideTheOutgoingRange: where the kernel says which ports it
// gives outgoing connections, Pick's ports are below them, distinct, and free
// once returned.
func TestPickIsOutsideTheOutgoingRange(t *testing.T) {
	lo, hi, ok := Range()
	if !ok {
		t.Skip("no ip_local_port_range here")
	}
	ports, err := Pick("127.0.0.1", 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if port < lo || port > hi {
			t.Errorf("port %d, want within [%d, %d]", port, lo, hi)
		}
		if seen[port] {
			t.Errorf("port %d picked twice: %v", port, ports)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Errorf("port %d is not free once picked: %v", port, err)
			continue
		}
		l.Close()
	}
}
