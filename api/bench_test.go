package api

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/pki"
	"github.com/kumoproj/kumo/internal/token"
	"github.com/kumoproj/kumo/runspec"
	"github.com/kumoproj/kumo/server"
	"github.com/kumoproj/kumo/server/bearer"
	"github.com/kumoproj/kumo/server/embedded"
)

// benchServer is a kumo server in this process serving the API, a token
// the policy makes admin, and the owner's Go client beside it.
type benchServer struct {
	url, token string
	kc         *client.Client // the owner's, attached as the CLI attaches
}

func startBenchServer(b *testing.B) *benchServer {
	b.Helper()
	home := b.TempDir()
	ctx := context.Background()
	tok, _, err := token.Open(filepath.Join(home, "auth")).Create("bench", nil, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, embedded.PolicyFileName), []byte("grants:\n  - role: admin\n    subjects: [\"token:bench\"]\n    scopes: [\"*/*\"]\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	p, err := pki.Open(home, pki.Options{})
	if err != nil {
		b.Fatal(err)
	}
	policy, err := embedded.LoadPolicy(home, "", p.Owner())
	if err != nil {
		b.Fatal(err)
	}
	verifiers, err := bearer.Config{KumoTokensDir: filepath.Join(home, "auth")}.Verifiers(ctx)
	if err != nil {
		b.Fatal(err)
	}
	apiClient, err := client.Open(client.Options{Home: home, CallerCredentials: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { apiClient.Close() })
	h, err := New(Options{Client: apiClient, Policy: policy, ForwardCredentials: true})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := client.StartServer(ctx, client.Options{Home: home}, client.ServerOptions{
		Options:         server.Options{Address: "127.0.0.1:0", Headless: true, HTTP: h},
		StackRoots:      []string{home},
		BearerVerifiers: []server.BearerVerifier{bearer.Chain(verifiers...)},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Stop() })
	kc, err := client.Open(client.Options{Home: home})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { kc.Close() })
	return &benchServer{url: srv.Info().APIURL, token: tok, kc: kc}
}

func (s *benchServer) do(b *testing.B, method, path, body string, want int) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d", method, path, resp.StatusCode)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // drained, so the connection is reused
}

// percentile is the p-th percentile of ds (sorted).
func percentile(ds []time.Duration, p float64) time.Duration {
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// compare runs viaClient and viaAPI one after the other b.N times and
// reports each one's p50 and p95, and the API's added latency at both.
func compare(b *testing.B, viaClient, viaAPI func()) {
	viaClient() // warm both paths: connections, caches
	viaAPI()
	var tc, ta []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		viaClient()
		tc = append(tc, time.Since(start))
		start = time.Now()
		viaAPI()
		ta = append(ta, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(tc)
	slices.Sort(ta)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(tc, .50)), "client-p50-ms")
	b.ReportMetric(ms(percentile(tc, .95)), "client-p95-ms")
	b.ReportMetric(ms(percentile(ta, .50)), "api-p50-ms")
	b.ReportMetric(ms(percentile(ta, .95)), "api-p95-ms")
	b.ReportMetric(ms(percentile(ta, .50)-percentile(tc, .50)), "added-p50-ms")
	b.ReportMetric(ms(percentile(ta, .95)-percentile(tc, .95)), "added-p95-ms")
}

// BenchmarkAPI measures the HTTP API's added latency over the Go client it
// wraps, against a kumo server in this process: GET runs/{id} against
// Client.ShowRun, and POST runs (a preview) against Client.Settings and
// Client.Preview, what the CLI calls. Run with
// go test -run '^$' -bench BenchmarkAPI -benchtime 200x ./api
func BenchmarkAPI(b *testing.B) {
	s := startBenchServer(b)
	ctx := context.Background()
	empty := &engine.Spec{Resources: []engine.Resource{}}
	preview := func(project string) *client.Run {
		settings, err := s.kc.Settings(ctx, "default", runspec.RuntimeSettings{})
		if err != nil {
			b.Fatal(err)
		}
		run, err := s.kc.Preview(ctx, client.Request{Project: project, Workspace: "default", Spec: empty, Parallelism: 10, Settings: settings})
		if err != nil {
			b.Fatal(err)
		}
		return run
	}
	run := preview("bench")
	if _, err := run.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("GetRun", func(b *testing.B) {
		compare(b, func() {
			if _, err := s.kc.ShowRun(ctx, "", run.RunID); err != nil {
				b.Fatal(err)
			}
		}, func() { s.do(b, http.MethodGet, "/api/v1/runs/"+run.RunID, "", http.StatusOK) })
	})
	b.Run("PostRun", func(b *testing.B) {
		compare(b, func() { preview("bench") }, func() {
			s.do(b, http.MethodPost, "/api/v1/runs", `{"operation":"preview","project":"bench","workspace":"default","spec":{"resources":[]}}`, http.StatusAccepted)
		})
	})
}
