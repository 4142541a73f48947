package temporaltest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// TestVersionMatchesGoMod: the server the tests run is the one kumo links
// against, and the build script and wrapper module build that version.
func TestVersionMatchesGoMod(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server ` + regexp.QuoteMeta(Version) + `( // indirect)?$`)
	for _, f := range []string{"go.mod", "hack/tools/temporal-server/go.mod"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !want.Match(b) {
			t.Errorf("%s does not require go.temporal.io/server %s (temporaltest.Version)", f, Version)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "hack/build-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nTEMPORAL_VERSION="+Version+" ") {
		t.Errorf("hack/build-tools.sh does not build temporal-server %s", Version)
	}
}

// TestClusterSurvivesKills: the services start as four processes over
// PostgreSQL with TLS on the frontend; a client without a certificate is
// refused; a namespace registered stays readable after SIGKILL and restart
// of each service and a restart of PostgreSQL.
func TestClusterSurvivesKills(t *testing.T) {
	c := Start(t)
	ctx := context.Background()
	cfg, err := c.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tc, err := client.DialContext(ctx, client.Options{HostPort: c.Address, ConnectionOptions: client.ConnectionOptions{TLS: cfg}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: "kumo-test", WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	described := func(what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := tc.WorkflowService().DescribeNamespace(cctx, &workflowservice.DescribeNamespaceRequest{Namespace: "kumo-test"})
			cancel()
			if err == nil {
				return
			}
			var nf *serviceerror.NamespaceNotFound
			if errors.As(err, &nf) || time.Now().After(deadline) {
				t.Fatalf("after %s: describe namespace: %v", what, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	described("registration")

	plain := cfg.Clone()
	plain.Certificates = nil
	if _, err := client.DialContext(ctx, client.Options{HostPort: c.Address, ConnectionOptions: client.ConnectionOptions{TLS: plain}, Logger: quiet}); err == nil {
		t.Error("a client without a certificate connected to the frontend")
	}

	for _, s := range Services {
		start := time.Now()
		if err := c.Kill(s); err != nil {
			t.Fatal(err)
		}
		if err := c.StartService(s); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s killed and serving again in %s", s, time.Since(start).Round(time.Millisecond))
		described("SIGKILL of " + s)
	}
	start := time.Now()
	if err := c.RestartPostgres(); err != nil {
		t.Fatal(err)
	}
	described("a PostgreSQL restart")
	t.Logf("PostgreSQL restarted and the namespace readable again in %s", time.Since(start).Round(time.Millisecond))
	if ex := c.Exited(); len(ex) > 0 {
		t.Errorf("services exited by themselves: %v", ex)
	}
}
