// Command kube-controller-manager is a thin wrapper that builds the upstream
// Kubernetes controller manager from the Go module proxy. kumo's local cluster runs
// its namespace and garbage-collector controllers, so that deleted Namespaces and
// owned objects actually go away, and, with simulated nodes, the workload
// controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, ...).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
