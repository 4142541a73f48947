package client

import (
	"net"

	sdkclient "go.temporal.io/sdk/client"
)

// compressionFor is the gRPC compression of a connection to a Temporal server
// at address. A server on this machine (a loopback address, where kumo's own
// servers bind) gets none: moving the bytes costs nothing there, and gzip costs
// CPU on both ends of every call, the server's included when it is embedded, on
// the cores the cluster's apiserver and etcd need during a run. kumo's
// payloads are encrypted, so what gzip could shrink is little more than the
// calls' framing. A server elsewhere keeps the SDK's default (gzip), which
// saves bandwidth on a network.
func compressionFor(address string) sdkclient.GrpcCompression {
	if onThisMachine(address) {
		return &sdkclient.GrpcCompressionNone{}
	}
	return nil
}

// onThisMachine reports whether address (host:port) names a loopback host.
func onThisMachine(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
