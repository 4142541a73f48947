// Command etcd is a thin wrapper that builds etcd from the Go module proxy for
// kumo's local Kubernetes API server.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
