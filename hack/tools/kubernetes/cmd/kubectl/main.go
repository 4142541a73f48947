// Command kubectl is a thin wrapper that builds the upstream kubectl from the
// Go module proxy, at the version of the local cluster. make bench times
// `kubectl apply --server-side` as one of the peers kumo is measured against;
// nothing else in kumo runs it.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
