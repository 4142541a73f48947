// Command kube-apiserver is a thin wrapper that builds the upstream Kubernetes API
// server from the Go module proxy, so kumo's tests and quick start can run a real
// apiserver without downloading release binaries.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
