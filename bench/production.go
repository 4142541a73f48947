package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/temporaltest"
)

// production, when set (-temporal production), is the Temporal every row's
// kumo runs on instead of an embedded server of its own: temporal-server's
// four services as processes on PostgreSQL with TLS on the frontend
// (internal/temporaltest, deploy/temporal-production.md). The worker still
// runs in the bench process, as on the embedded server, so the rows differ
// only in the Temporal under them.
var production *temporaltest.Cluster

// productionNamespace is where the bench's runs go on the production cluster.
const productionNamespace = "kumo-bench"

// startProduction launches the cluster in dir and prepares its namespace as
// kumo temporal setup does.
func startProduction(ctx context.Context, dir string) (*temporaltest.Cluster, error) {
	c, err := temporaltest.Launch(dir)
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("production temporal: %w", err)
	}
	kc, err := client.OpenContext(ctx, productionOptions(c, filepath.Join(dir, "setup-home"), 7*24*time.Hour))
	if err == nil {
		_, err = kc.SetupTemporal(ctx)
		kc.Close()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("production temporal: setup: %w", err)
	}
	return c, nil
}

// productionOptions are a plaintext client's options on c (as the embedded
// rows', see startKumo), registering the namespace when register is set.
func productionOptions(c *temporaltest.Cluster, home string, register time.Duration) client.Options {
	return client.Options{
		Home: home, TemporalAddress: c.Address, Namespace: productionNamespace, InsecurePlaintext: true, RegisterNamespace: register,
		Connection: envconfig.ClientConfigProfile{TLS: &envconfig.ClientConfigTLS{
			ClientCertPath: c.ClientCert.CertFile, ClientKeyPath: c.ClientCert.KeyFile, ServerCACertPath: c.CAFile,
		}},
	}
}

// startProductionKumo is startKumo on the production cluster: a client and
// a worker of its own (no server to start: started is zero), and a
// connection to PostgreSQL for the databases' size.
func startProductionKumo(ctx context.Context, home string, null bool) (*kumo, error) {
	k := &kumo{}
	tlsCfg, err := production.TLSConfig()
	if err != nil {
		return nil, err
	}
	if k.tc, err = sdkclient.DialContext(ctx, sdkclient.Options{HostPort: production.Address, Namespace: productionNamespace, Logger: quiet,
		ConnectionOptions: sdkclient.ConnectionOptions{TLS: tlsCfg}}); err != nil {
		return nil, err
	}
	if k.c, err = client.Open(productionOptions(production, home, 0)); err != nil {
		k.close()
		return nil, err
	}
	if k.pg, err = pgx.Connect(ctx, production.PG.URL("postgres")); err != nil {
		k.close()
		return nil, err
	}
	return k, k.startWorker(null)
}

// pgUsed is the size of Temporal's two databases (persistence and
// visibility) on disk.
func pgUsed(ctx context.Context, conn *pgx.Conn) (int64, error) {
	var n int64
	err := conn.QueryRow(ctx, "SELECT pg_database_size('temporal') + pg_database_size('temporal_visibility')").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("production temporal: database size: %w", err)
	}
	return n, nil
}
