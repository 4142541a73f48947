package backend

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kumoproj/kumo/engine"
)

// configMaps returns n ConfigMaps as a spec and as the state an apply records
// for them (the object the apiserver returned: uid, resourceVersion,
// creationTimestamp added), each with a 256-byte value, as bench/ applies.
func configMaps(n int, value string) (spec, state []engine.Resource) {
	for i := range n {
		name := fmt.Sprintf("cm-%05d", i)
		id := "v1:ConfigMap:bench:" + name
		v := value
		if v == "" {
			v = strings.Repeat(fmt.Sprintf("value-%d-", i), 40)[:256]
		}
		attrs := map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "bench"},
			"data":     map[string]any{"value": v},
		}
		spec = append(spec, engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: attrs, DependsOn: []string{"v1:Namespace:bench"}})
		live := map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "bench",
				"uid":               fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", i*2654435761, i%65536, (i*7)%65536, (i*13)%65536, i*40503),
				"resourceVersion":   fmt.Sprint(1000 + i),
				"creationTimestamp": "2026-11-26T00:00:00Z"},
			"data": map[string]any{"value": v},
		}
		state = append(state, engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: live, DependsOn: []string{"v1:Namespace:bench"}})
	}
	return spec, state
}

// BenchmarkCompression compares the codecs on the spec and state of 10,000
// ConfigMaps: bytes written and time per encode. zstd's default level is what
// compress uses (the measured figures are in docs/performance.md).
func BenchmarkCompression(b *testing.B) {
	spec, state := configMaps(10000, "")
	plain, err := json.Marshal(engine.Release{Spec: &engine.Spec{Resources: spec}, State: &engine.State{Resources: state}})
	if err != nil {
		b.Fatal(err)
	}
	gz := func(level int) func([]byte) []byte {
		return func(p []byte) []byte {
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, level)
			w.Write(p)
			w.Close()
			return buf.Bytes()
		}
	}
	zs := func(level zstd.EncoderLevel) func([]byte) []byte {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(level))
		return func(p []byte) []byte { return enc.EncodeAll(p, nil) }
	}
	for _, c := range []struct {
		name string
		fn   func([]byte) []byte
	}{
		{"gzip-default", gz(gzip.DefaultCompression)},
		{"gzip-best", gz(gzip.BestCompression)},
		{"zstd-fastest", zs(zstd.SpeedFastest)},
		{"zstd-default", zs(zstd.SpeedDefault)},
		{"zstd-better", zs(zstd.SpeedBetterCompression)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out []byte
			start := time.Now()
			for b.Loop() {
				out = c.fn(plain)
			}
			b.ReportMetric(float64(len(plain)), "plain-bytes")
			b.ReportMetric(float64(len(out)), "bytes")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/encode")
		})
	}
}

func TestDecompressRefusesABomb(t *testing.T) {
	enc, _ := zstd.NewWriter(nil)
	bomb := enc.EncodeAll(make([]byte, maxDecompressed+1), nil)
	if _, err := decompress(bomb); err == nil {
		t.Fatalf("a record decompressing to more than %d bytes was accepted", maxDecompressed)
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for _, text := range []string{"", "revision: 1\n", `{"a":1}`} {
		c, err := compress([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if !isCompressed(c) {
			t.Fatalf("compress(%q) is no zstd frame", text)
		}
		got, err := decompress(c)
		if err != nil || string(got) != text {
			t.Fatalf("round trip of %q: %q, %v", text, got, err)
		}
		if got, _ := decompress([]byte(text)); string(got) != text {
			t.Fatalf("plain %q read as %q", text, got)
		}
	}
}
