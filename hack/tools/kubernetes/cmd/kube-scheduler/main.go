// Command kube-scheduler is a thin wrapper that builds the upstream Kubernetes
// scheduler from the Go module proxy. kumo's local cluster runs it, with the
// workload controllers and kwok's simulated nodes, so that Pods get a node.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
