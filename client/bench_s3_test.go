package client_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/internal/s3test"
)

// BenchmarkApplyS3VsLocal measures the same cold apply of a Namespace and 200 (and
// 1,000) ConfigMaps with the local backend and with the S3 backend on a loopback
// versitygw, alternating which goes first, and reports both times, their ratio, and each
// backend's bytes written relative to the spec's size.
//
//	go test ./client -run '^$' -bench BenchmarkApplyS3VsLocal/flat-200 -benchtime 5x
func BenchmarkApplyS3VsLocal(b *testing.B) {
	cluster := localclustertest.Start(b)
	srv := s3test.Start(b)
	bucket := srv.Bucket(b)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	for _, n := range []int{200, 1000} {
		b.Run(fmt.Sprintf("flat-%d", n), func(b *testing.B) { benchS3VsLocal(b, cluster.Kubeconfig, bucket, n) })
	}
}

func benchS3VsLocal(b *testing.B, kubeconfig, bucket string, n int) {
	var took [2]time.Duration
	var written [2]float64
	for i := 0; i < b.N; i++ {
		urls := []string{"", fmt.Sprintf("s3://%s/bench-%d-%d", bucket, n, i)}
		for k := range urls {
			j := (i + k) % 2 // alternate which goes first
			ns := fmt.Sprintf("bench-s3-%d-%d-%d", j, i, time.Now().UnixNano()%1e6)
			spec := configMaps(ns, n, false)
			specYAML, err := yaml.Marshal(spec)
			if err != nil {
				b.Fatal(err)
			}
			be, d := applyWith(b, client.Options{Home: b.TempDir(), Backend: urls[j]}, kubeconfig, ns, spec)
			took[j] += d
			written[j] = float64(be.(interface{ BytesWritten() int64 }).BytesWritten()) / float64(len(specYAML))
		}
	}
	b.ReportMetric(took[0].Seconds()/float64(b.N), "s/apply-local")
	b.ReportMetric(took[1].Seconds()/float64(b.N), "s/apply-s3")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "s3/local")
	b.ReportMetric(written[0], "written/spec-local")
	b.ReportMetric(written[1], "written/spec-s3")
}
