// Package quietport picks loopback ports for servers a process starts
// itself (the embedded Temporal server, a test's etcd, kube-apiserver and S3
// server) that no outgoing connection can take before the server listens.
package quietport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// A server given a port number listens on it only after the picker closed
// its own listener on it; the embedded Temporal server panics (taking the
// whole process with it) when the port was taken meanwhile, etcd and
// kube-apiserver fail to start. A port the kernel picks for ":0" is in its
// range of ports for outgoing connections, which any connect() in the process
// or on the machine may take in that window; a port below that range is taken
// only by a program that listens on it by number.

// Range is where free ports are looked for: [lo, hi], below the
// kernel's range for outgoing connections (Linux: ip_local_port_range), or
// ok false when that range cannot be read or leaves no room below it.
func Range() (lo, hi int, ok bool) {
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

// Listen listens on a free port of host below the kernel's range for
// outgoing connections, trying random ones, or on any free port (":0") when
// that range is unknown or full.
func Listen(host string) (net.Listener, error) {
	if lo, hi, ok := Range(); ok {
		for range 50 {
			port := lo + rand.IntN(hi-lo+1)
			if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", net.JoinHostPort(host, "0"))
}

// Pick returns n distinct free ports of host picked as Listen picks them, for
// a server to listen on once they are returned (their listeners closed).
func Pick(host string, n int) ([]int, error) {
	ports := make([]int, n)
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := Listen(host)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
