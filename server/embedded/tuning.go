package embedded

import (
	"time"

	"go.temporal.io/server/common/dynamicconfig"
)

// tuning selects kumo's performance settings. Start uses fullTuning; the
// benchmarks switch parts off to measure what each is worth.
type tuning struct {
	pollRPS         bool // raise the history queue processors' MaxPollRPS
	singlePartition bool // one task queue partition
	wal             bool // SQLite WAL journal with synchronous=NORMAL
	timerShift      bool // fire timers within timerShift, not a second late
	// retentionJitter, when set, spreads the deletion of closed workflows
	// over this much time after their retention instead of Temporal's 30
	// minutes (tests that wait for a deletion).
	retentionJitter time.Duration
}

var fullTuning = tuning{pollRPS: true, singlePartition: true, wal: true, timerShift: true}

// timerShift is the history service's TimerProcessorMaxTimeShift here. The
// timer queue reads ahead to now plus that shift, and a timer created due
// before what it read is moved past it: with the default of 1 s every timer,
// however short, fired about a second late (measured: ten 1 ms timers took
// 1.00 s each). The shift allows for clocks that differ between the hosts of
// a cluster; one process has one clock. kumo's walk gives its workflow task
// back with a 1 ms timer after each second of local steps (a chain's), so a
// chain spent every other second waiting for that timer.
const timerShift = 10 * time.Millisecond

// dynamicConfig returns the server's dynamic configuration.
//
// The defaults are sized for clusters of many hosts and shards. On one
// machine with one shard the history service's queue processors are the
// bottleneck: each polls its task queue at most MaxPollRPS (default 20) times
// a second, so every step of a workflow that goes through the transfer queue
// (schedule an activity, complete it, dispatch the next workflow task) waits
// for a poll slot. Measured on a loaded 2-core machine, one workflow running
// activities one after another: ~46 ms per activity with the defaults, ~20 ms
// with the poll rates raised, ~9 ms adding SQLite WAL (see sqlConfig and
// BenchmarkSequentialActivity).
//
// system.forceSearchAttributesCacheRefreshOnRead is deliberately not set: with
// SQL visibility, custom search attributes are namespace aliases of
// preallocated columns, which that flag does not touch; it would only add a
// database read to every search-attribute lookup. New namespaces get kumo's
// attributes at creation, and RegisterSearchAttributes waits until added
// ones are visible.
//
// maintenance: see Options.Maintenance.
func dynamicConfig(t tuning, maintenance bool) dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		// The CLI and Web UI list runs through visibility; the default of 10
		// requests per second per namespace throttles a UI page plus a CLI.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
	if !maintenance {
		for _, k := range []dynamicconfig.Key{
			dynamicconfig.TaskQueueScannerEnabled.Key(),
			dynamicconfig.HistoryScannerEnabled.Key(),
			dynamicconfig.ExecutionsScannerEnabled.Key(),
			dynamicconfig.EnableParentClosePolicyWorker.Key(),
		} {
			dc[k] = false
		}
	}
	if t.timerShift {
		dc[dynamicconfig.TimerProcessorMaxTimeShift.Key()] = timerShift
	}
	if t.pollRPS {
		const pollRPS = 2000
		for _, k := range []dynamicconfig.Key{
			dynamicconfig.TransferProcessorMaxPollRPS.Key(),
			dynamicconfig.VisibilityProcessorMaxPollRPS.Key(),
			dynamicconfig.TimerProcessorMaxPollRPS.Key(),
			dynamicconfig.OutboundProcessorMaxPollRPS.Key(),
			dynamicconfig.ArchivalProcessorMaxPollRPS.Key(),
		} {
			dc[k] = pollRPS
		}
	}
	if t.retentionJitter > 0 {
		dc[dynamicconfig.RetentionTimerJitterDuration.Key()] = t.retentionJitter
	}
	if !t.singlePartition {
		return dc
	}
	// One worker polls each task queue: with the default of several
	// partitions, tasks land in partitions the poller is not waiting on and
	// have to be forwarded to it. (No measurable change for one workflow,
	// whose activities are dispatched eagerly, bypassing matching.)
	dc[dynamicconfig.MatchingNumTaskqueueReadPartitions.Key()] = 1
	dc[dynamicconfig.MatchingNumTaskqueueWritePartitions.Key()] = 1
	return dc
}
