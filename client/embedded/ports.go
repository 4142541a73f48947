package embedded

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// The server listens on the ports pickPorts chose only after pickPorts has
// closed its own listeners on them, and it panics (taking the whole process
// with it) when one was taken meanwhile. A port the kernel picks for ":0" is
// in its range of ports for outgoing connections, which any connect() in the
// process or on the machine may take in that window; a port below that range
// is taken only by a program that listens on it by number.

// quietPorts is where free ports are looked for: [lo, hi], below the
// kernel's range for outgoing connections (Linux: ip_local_port_range), or
// ok false when that range cannot be read or leaves no room below it.
func quietPorts() (lo, hi int, ok bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, 0, false
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= 20000 {
		return 0, 0, false
	}
	return 20000, low - 1, true
}

// listenQuiet listens on a free port of host below the kernel's range for
// outgoing connections, trying random ones, or on any free port (":0") when
// that range is unknown or full.
func listenQuiet(host string) (net.Listener, error) {
	if lo, hi, ok := quietPorts(); ok {
		for range 50 {
			port := lo + rand.IntN(hi-lo+1)
			if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", net.JoinHostPort(host, "0"))
}
