package main

import (
	"errors"
	"time"

	"github.com/urfave/cli/v2"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/codec"
	"github.com/kumoproj/kumo/engine/generate"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/worker"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run a kumo worker against an existing Temporal cluster (TEMPORAL_ADDRESS or --temporal-address)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task-queue", Usage: "serve only the runtime steps (previews, applies, deletes, waits, drift and status reads) of workspaces whose temporal.taskQueue is this queue, e.g. from inside their cluster; with no kubeconfig, the pod's service account (default: kumo's own queue, every workflow and activity)"},
			&cli.StringFlag{Name: "health-address", Usage: "host:port serving /livez and /readyz for probes (default: none)"},
			&cli.StringFlag{Name: "metrics-address", Usage: "host:port serving Prometheus metrics on /metrics: kumo's (kumo_runs_*, kumo_node_step*, kumo_drift*, kumo_runs_awaiting_approval) and the Temporal SDK's (default: none)"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format on stderr: text or json"},
			&cli.StringSliceFlag{Name: "stack-root", Usage: "a directory stacks given to this worker must lie under, symlinks resolved (repeat for more; default: none, so this worker generates from no stack directory)"},
			eventsFlag(),
			planPoliciesFlag(),
			&cli.DurationFlag{Name: "shutdown-grace", Value: 2 * time.Minute, Usage: "on SIGTERM, how long activities in flight may take to finish (they keep heartbeating) before they are cancelled and retried elsewhere; a second SIGTERM exits at once"},
		},
		Action: runWorker,
	}
}

func runWorker(c *cli.Context) error {
	log, err := logger(c.String("log-format"), globalBool(c, "debug"))
	if err != nil {
		return err
	}
	// A bad events file is the operator's to fix before anything connects.
	events, err := client.LoadEvents(c.String("events"))
	if err != nil {
		return err
	}
	conn, err := connection(c)
	if err != nil {
		return err
	}
	if conn.Address == "" {
		return errors.New("kumo worker needs --temporal-address (or TEMPORAL_ADDRESS, or a temporal CLI profile with an address): the Temporal frontend to poll")
	}
	// The CLI's records: a worker serves every project, so it takes the
	// backend flags (or KUMO_BACKEND) but reads no project.yaml.
	opts := backendFlags(c)
	opts.TemporalAddress = conn.Address
	keys, err := client.CodecKeys(opts)
	if err != nil {
		return err
	}
	if keys == nil {
		log.Warn("--insecure-plaintext: no codec key for "+conn.Address+": "+client.PlaintextExposes, "address", conn.Address)
	}
	b, err := client.OpenBackend(c.Context, opts)
	if err != nil {
		return err
	}
	var health *healthServer
	if a := c.String("health-address"); a != "" {
		if health, err = startHealth(a, log); err != nil {
			return err
		}
		defer health.stop()
	}
	// The SDK logs at warn and above unless --debug.
	sdkLog := log
	if !globalBool(c, "debug") {
		sdkLog = slogAtLeast(log, slogWarn)
	}
	sdkOpts := sdkclient.Options{Logger: sdklog.NewStructuredLogger(sdkLog), DataConverter: codec.DataConverter(keys)}
	if conn.TLS == nil {
		// A worker beside this home's kumo server dials it as the owner.
		if sdkOpts.ConnectionOptions.TLS, err = client.HomeServerTLS(opts.Home, conn.Address); err != nil {
			return err
		}
	}
	var metrics *metricsServer
	if a := c.String("metrics-address"); a != "" {
		if metrics, err = startMetrics(a, log); err != nil {
			return err
		}
		defer metrics.stop()
		sdkOpts.MetricsHandler = metrics.handler
	}
	tc, err := client.Dial(c.Context, conn, sdkOpts, client.DialOptions{})
	if err != nil {
		return err
	}
	defer tc.Close()
	if metrics != nil {
		if err := metrics.observeApprovals(c.Context, tc); err != nil {
			return err
		}
	}
	if err := client.CheckSearchAttributes(c.Context, tc, conn); err != nil {
		return err
	}
	grace := c.Duration("shutdown-grace")
	roots, err := client.StackRoots(c.StringSlice("stack-root"))
	if err != nil {
		return err
	}
	home := opts.Home
	if home == "" {
		home = client.DefaultHome()
	}
	planPolicies, err := loadPlanPolicies(c)
	if err != nil {
		return err
	}
	wopts := worker.Options{StopTimeout: grace, Generation: generate.Policy{StackRoots: roots, TrustedDirs: []string{client.GeneratorsDir(home)}, SourceCache: client.SourceCacheDir(home)}, Events: events,
		Policies: planPolicies}
	queue := c.String("task-queue")
	var w sdkworker.Worker
	if queue == "" || queue == runspec.TaskQueue {
		queue, w = runspec.TaskQueue, worker.NewWithOptions(tc, b, wopts)
	} else {
		w = worker.NewForQueue(tc, b, queue, wopts)
	}
	if err := w.Start(); err != nil {
		return err
	}
	health.setReady(true)
	log.Info("kumo worker polling", "taskQueue", queue, "address", conn.Address, "namespace", conn.Namespace)

	<-c.Context.Done()
	health.setReady(false)
	log.Info("stopping: no new tasks; activities in flight may finish, heartbeating; a second signal exits at once", "grace", grace)
	exitOnSecondSignal()
	w.Stop()
	log.Info("stopped")
	return nil
}

// eventsFlag names the operator's event configuration file of a server or a
// worker.
func eventsFlag() cli.Flag {
	return &cli.StringFlag{Name: "events", Usage: "YAML file of event sinks every workspace's run and drift events also go to, with allowHTTP (plain http to hosts other than loopback) and apiURL (for approve links) (default: none; workspaces name their own under notifications.sinks)"}
}
