// Command kwok wraps kwok (sigs.k8s.io/kwok), which simulates Nodes and the
// lifecycle of their Pods against a real apiserver: no container runs, but Pods
// get scheduled, become Running and Ready, complete and are deleted as with a
// kubelet. kumo's local cluster runs it so that Deployments become available.
//
// The upstream binary does nothing without Stages in its configuration (kwokctl
// writes them). This wrapper hands it kwok's own default "fast" stages (node
// initialize; pod ready, complete, delete) from the same module version, as an
// extra --config file, so one flag-compatible binary is all a caller needs.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

func main() {
	stages, err := writeStages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kwok:", err)
		os.Exit(1)
	}
	os.Args = append(os.Args, "--config="+stages)

	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}
	ctx, logger := log.InitFlags(signals.SetupSignalContext(), global)
	ctx, err = config.InitFlags(ctx, global)
	os.Remove(stages) // read by now
	if err != nil {
		logger.Error("load configuration", "err", err)
		os.Exit(1)
	}
	root := cmd.NewCommand(ctx)
	root.PersistentFlags().AddFlagSet(global)
	if err := root.ExecuteContext(ctx); err != nil {
		logger.Error("kwok", "err", err)
		os.Exit(1)
	}
}

// writeStages writes the default stages, as one multi-document YAML file, to a
// temporary file and returns its path.
func writeStages() (string, error) {
	f, err := os.CreateTemp("", "kwok-stages-*.yaml")
	if err != nil {
		return "", err
	}
	docs := []string{nodefast.DefaultNodeInit, podfast.DefaultPodReady, podfast.DefaultPodComplete, podfast.DefaultPodDelete}
	_, err = f.WriteString(strings.Join(docs, "\n---\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
