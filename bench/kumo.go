package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/kumoproj/kumo/activities"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/memory"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server/embedded"
	"github.com/kumoproj/kumo/worker"
	"github.com/kumoproj/kumo/workflows"
)

// kumo is the embedded Temporal server with one worker in this process and a
// client on it, the worker polling on the client's connection: how a
// one-shot `kumo apply` runs. Server start is timed apart (a one-shot CLI
// pays it once per command).
type kumo struct {
	srv *embedded.Server // nil on the production cluster
	tc  sdkclient.Client
	// clientsTC: tc is c's own connection (c closes it).
	clientsTC bool
	c         *client.Client
	w         sdkworker.Worker
	db        *sql.DB // a reader on the server's database, for its size
	pg        *pgx.Conn
	started   time.Duration
}

// nullRuntimes hands the in-memory runtime out for every type: runs with it
// cost only kumo's own orchestration.
type nullRuntimes struct{ rt *memory.Runtime }

func (n nullRuntimes) For(engine.Type, runspec.RuntimeSettings) (runtime.Runtime, error) {
	return n.rt, nil
}

func startKumo(ctx context.Context, home string, null bool) (*kumo, error) {
	if production != nil {
		return startProductionKumo(ctx, home, null)
	}
	began := time.Now()
	srv, err := embedded.Start(ctx, embedded.Options{Dir: home + "/temporal"})
	if err != nil {
		return nil, err
	}
	k := &kumo{srv: srv, started: time.Since(began)}
	if k.db, err = openDB(filepath.Join(home, "temporal", "temporal.db")); err != nil {
		k.close()
		return nil, err
	}
	// Plaintext: the bench measures orchestration against the raw floor
	// (codec/'s benchmark measures what the codec adds).
	if k.c, err = client.Open(client.Options{Home: home, TemporalAddress: srv.Address(), Namespace: srv.Namespace(), Connection: ownerProfile(srv), InsecurePlaintext: true}); err != nil {
		k.close()
		return nil, err
	}
	// The worker polls on the client's own connection, as a one-shot
	// command's in-process worker does: a run's first workflow task comes
	// back with its start.
	if k.tc, err = k.c.Temporal(ctx); err != nil {
		k.close()
		return nil, err
	}
	k.clientsTC = true
	return k, k.startWorker(null)
}

// startWorker starts the worker in this process: kumo's, or with the
// in-memory runtime (null).
func (k *kumo) startWorker(null bool) error {
	if null {
		k.w = sdkworker.New(k.tc, runspec.TaskQueue, sdkworker.Options{MaxHeartbeatThrottleInterval: activities.HeartbeatThrottle,
			Interceptors: []interceptor.WorkerInterceptor{workflows.Interceptor}})
		workflows.Register(k.w)
		activities.Register(k.w, activities.New(k.c.Backend(), nullRuntimes{memory.New()}, worker.RunChecker(k.tc)))
	} else {
		k.w = worker.New(k.tc, k.c.Backend())
	}
	if err := k.w.Start(); err != nil {
		k.close()
		return err
	}
	return nil
}

func (k *kumo) close() {
	if k.w != nil {
		k.w.Stop()
	}
	if k.c != nil {
		k.c.Close()
	}
	if k.tc != nil && !k.clientsTC {
		k.tc.Close()
	}
	if k.db != nil {
		_ = k.db.Close()
	}
	if k.pg != nil {
		_ = k.pg.Close(context.Background())
	}
	if k.srv != nil {
		_ = k.srv.Stop()
	}
}

// usage is what the database and backend hold or have written so far.
func (k *kumo) usage(ctx context.Context) (db, written int64, err error) {
	if k.pg != nil {
		db, err = pgUsed(ctx, k.pg)
	} else {
		db, err = dbUsed(ctx, k.db)
	}
	if err != nil {
		return 0, 0, err
	}
	written, err = bytesWritten(k.c.Backend())
	return db, written, err
}

// run starts one apply (spec set) or destroy (spec nil) and waits for it.
func (k *kumo) run(ctx context.Context, project string, spec *engine.Spec, settings runspec.RuntimeSettings, parallel int) (time.Duration, *client.Run, error) {
	req := client.Request{Project: project, Workspace: "default", Spec: spec, AutoApprove: true, Parallelism: parallel, Settings: settings}
	start := time.Now()
	var r *client.Run
	var err error
	if spec != nil {
		r, err = k.c.Apply(ctx, req)
	} else {
		r, err = k.c.Destroy(ctx, req)
	}
	if err != nil {
		return 0, nil, err
	}
	res, err := r.Wait(ctx)
	took := time.Since(start)
	if err == nil && res.Phase != engine.PhaseSucceeded {
		err = fmt.Errorf("phase %s: %s", res.Phase, res.Error)
	}
	return took, r, err
}

// history is what one run left in Temporal.
type history struct {
	events, bytes int
	// nodeLatency: per resource activity, scheduled to completed.
	nodeLatency []time.Duration
	// lastDelete: the last delete's scheduled to completed (in a flat destroy,
	// the Namespace's, which waits for its finalization).
	lastDelete time.Duration
}

func (k *kumo) history(ctx context.Context, r *client.Run) (history, error) {
	var h history
	it := k.tc.GetWorkflowHistory(ctx, r.WorkflowID, r.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]*historypb.HistoryEvent{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return h, err
		}
		h.events++
		h.bytes += proto.Size(e)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			switch a.GetActivityType().GetName() {
			case activities.ApplyResourceActivity, activities.DeleteResourceActivity:
				scheduled[e.GetEventId()] = e
			}
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			s, ok := scheduled[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			d := e.GetEventTime().AsTime().Sub(s.GetEventTime().AsTime())
			h.nodeLatency = append(h.nodeLatency, d)
			if s.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.DeleteResourceActivity {
				h.lastDelete = d
			}
		}
	}
	return h, nil
}

// ownerProfile is the connection of the owner of srv's home, for a client
// given srv's address as an existing cluster's.
func ownerProfile(srv *embedded.Server) envconfig.ClientConfigProfile {
	owner := srv.PKI().OwnerCert()
	return envconfig.ClientConfigProfile{TLS: &envconfig.ClientConfigTLS{
		ClientCertPath: owner.CertFile, ClientKeyPath: owner.KeyFile, ServerCACertPath: srv.PKI().CAFile(),
	}}
}
