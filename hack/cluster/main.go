// Command cluster runs kumo's local Kubernetes control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok with one simulated Node, on
// 127.0.0.1, so that Deployments become available) for the quick start, detached
// from the shell:
//
//	go run ./hack/cluster up       # start (no-op when running); prints the kubeconfig
//	go run ./hack/cluster status   # processes, readiness
//	go run ./hack/cluster down     # stop; data stays for the next up
//
// Everything lives in $KUMO_HOME/cluster (KUMO_HOME defaults to ~/.kumo); remove
// that directory after `down` to start from scratch.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kumoproj/kumo/internal/localcluster"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down|status")
		os.Exit(2)
	}
	dir, err := clusterDir()
	if err == nil {
		switch os.Args[1] {
		case "up":
			err = up(dir)
		case "down":
			err = down(dir)
		case "status":
			err = status(dir)
		default:
			fmt.Fprintln(os.Stderr, "usage: cluster up|down|status")
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func clusterDir() (string, error) {
	home := os.Getenv("KUMO_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = filepath.Join(h, ".kumo")
	}
	return filepath.Join(home, "cluster"), nil
}

// load returns the recorded cluster, or nil when none was ever started in dir.
func load(dir string) (*localcluster.Cluster, error) {
	c, err := localcluster.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return c, err
}

func up(dir string) error {
	prev, err := load(dir)
	if err != nil {
		return err
	}
	opts := localcluster.Options{Dir: dir, Detach: true, Workloads: true}
	if prev != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if prev.Running() && prev.Workloads && prev.Ready(ctx) == nil {
			printUsage(prev, "already running")
			return nil
		}
		// Partly running, stale or without workloads (started by an older kumo):
		// stop what is left, restart on the same ports
		// (etcd keeps its data and member URLs).
		if err := prev.Stop(); err != nil {
			return err
		}
		opts.EtcdPort, opts.EtcdPeerPort, opts.APIServerPort = prev.EtcdPort, prev.EtcdPeerPort, prev.APIServerPort
	}
	begin := time.Now()
	c, err := localcluster.Start(context.Background(), opts)
	if err != nil && prev != nil {
		// The old ports may be taken now: take new ones.
		opts.EtcdPort, opts.EtcdPeerPort, opts.APIServerPort = 0, 0, 0
		c, err = localcluster.Start(context.Background(), opts)
	}
	if err != nil {
		return err
	}
	printUsage(c, fmt.Sprintf("started in %v", time.Since(begin).Round(100*time.Millisecond)))
	return nil
}

func printUsage(c *localcluster.Cluster, what string) {
	fmt.Printf("local Kubernetes %s at %s (%s; Pods run on simulated node %s)\n", localcluster.KubernetesVersion, c.Server, what, localcluster.NodeName)
	fmt.Printf("kubeconfig: %s\n", c.Kubeconfig)
	fmt.Printf("try:        kubectl --kubeconfig %s get ns\n", c.Kubeconfig)
}

func down(dir string) error {
	c, err := load(dir)
	if err != nil {
		return err
	}
	if c == nil || len(c.Processes()) == 0 {
		fmt.Println("local Kubernetes is not running")
		return nil
	}
	if err := c.Stop(); err != nil {
		return err
	}
	fmt.Printf("local Kubernetes stopped (data kept in %s)\n", dir)
	return nil
}

func status(dir string) error {
	c, err := load(dir)
	if err != nil {
		return err
	}
	if c == nil || len(c.Processes()) == 0 {
		fmt.Println("local Kubernetes is not running (start it with `make cluster-up`)")
		return nil
	}
	for _, p := range c.Processes() {
		state := "running"
		if !p.Running {
			state = "NOT RUNNING"
		}
		fmt.Printf("%-24s pid %-7d %-11s log %s\n", p.Name, p.PID, state, p.Log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ready(ctx); err != nil {
		fmt.Printf("apiserver %s not ready: %v\n", c.Server, err)
		os.Exit(1)
	}
	fmt.Printf("apiserver %s ready\nkubeconfig: %s\n", c.Server, c.Kubeconfig)
	return nil
}
