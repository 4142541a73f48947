package s3_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/backendtest"
	"github.com/kumoproj/kumo/backend/s3"
	"github.com/kumoproj/kumo/internal/s3test"
)

var ctx = context.Background()

// TestConformanceVersitygw runs the conformance suite against a real S3-compatible
// server; every subtest gets a bucket of its own.
func TestConformanceVersitygw(t *testing.T) {
	srv := s3test.Start(t)
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		d, err := s3.NewDriver(ctx, srv.Options(srv.Bucket(t), "team/kumo"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// TestConformanceFake runs the suite against the in-process gofakes3, which is
// fast enough for -short.
func TestConformanceFake(t *testing.T) {
	backendtest.RunDriver(t, func(t *testing.T) backend.Driver {
		d, err := newDriver(newFakeServer(t), "kumo")
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// fake is an in-process gofakes3 behind a hook that sees (and may answer) every
// request first, for fault injection and request counting.
type fake struct {
	srv    *httptest.Server
	bucket string
	raw    *s3sdk.Client // to look at and change objects behind the backend's back

	mu       sync.Mutex
	hook     func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
	requests []string // "METHOD path?query", in order
}

func newFake(t *testing.T, prefix string) (*s3.Backend, *fake) {
	t.Helper()
	f := newFakeServer(t)
	b, err := newBackend(f, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// newFakeServer starts a gofakes3 with an empty bucket.
func newFakeServer(t *testing.T) *fake {
	t.Helper()
	f := &fake{bucket: "kumo-test"}
	next := gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(false)).Server()
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		hook := f.hook
		f.mu.Unlock()
		if hook != nil && hook(w, r, next) {
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	creds := credentials.NewStaticCredentialsProvider("key", "secret", "")
	if err := s3test.CreateBucket(ctx, f.srv.URL, creds, f.bucket); err != nil {
		t.Fatal(err)
	}
	f.raw = s3sdk.New(s3sdk.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(f.srv.URL), UsePathStyle: true})
	return f
}

func (f *fake) options(prefix string) s3.Options {
	return s3.Options{
		Bucket: f.bucket, Prefix: prefix, Endpoint: f.srv.URL, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("key", "secret", ""),
		MaxBackoff:  1, // a nanosecond: retries without waiting
	}
}

func newBackend(f *fake, prefix string) (*s3.Backend, error) {
	return s3.New(ctx, f.options(prefix))
}

func newDriver(f *fake, prefix string) (*s3.Driver, error) {
	return s3.NewDriver(ctx, f.options(prefix))
}

func (f *fake) setHook(h func(w http.ResponseWriter, r *http.Request, next http.Handler) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

// count resets the request log and returns a function giving the requests since.
func (f *fake) count() func() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
	return func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		return append([]string(nil), f.requests...)
	}
}

// keys lists every object in the bucket.
func (f *fake) keys(t *testing.T) []string {
	t.Helper()
	var keys []string
	pages := s3sdk.NewListObjectsV2Paginator(f.raw, &s3sdk.ListObjectsV2Input{Bucket: &f.bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

func (f *fake) putRaw(t *testing.T, key, data string) {
	t.Helper()
	if _, err := f.raw.PutObject(ctx, &s3sdk.PutObjectInput{Bucket: &f.bucket, Key: &key, Body: strings.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}

func (f *fake) deleteRaw(t *testing.T, key string) {
	t.Helper()
	if _, err := f.raw.DeleteObject(ctx, &s3sdk.DeleteObjectInput{Bucket: &f.bucket, Key: &key}); err != nil {
		t.Fatal(err)
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix string }{
		{"s3://bucket", "bucket", ""},
		{"s3://bucket/", "bucket", ""},
		{"s3://my.bucket-1/team/kumo/", "my.bucket-1", "team/kumo"},
		{"s3://b//x//", "b", "x"},
	} {
		bucket, prefix, err := s3.ParseURL(c.in)
		if err != nil || bucket != c.bucket || prefix != c.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", c.in, bucket, prefix, err, c.bucket, c.prefix)
		}
	}
	for _, bad := range []string{"", "bucket", "/tmp/x", "file:///tmp", "s3://", "s3:///prefix", "s3://user:pw@b/p", "s3://b:9000/p", "s3://b/p?region=x", "gs://b/p"} {
		if _, _, err := s3.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q): no error", bad)
		}
	}
}

// TestBucketChecks: a missing bucket or refused credentials are reported by New,
// naming the bucket, before anything else happens.
func TestBucketChecks(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	opts := srv.Options("no-such-bucket", "")
	if _, err := s3.New(ctx, opts); err == nil || !strings.Contains(err.Error(), `"no-such-bucket"`) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("New with a missing bucket: %v", err)
	}
	opts = srv.Options(bucket, "")
	opts.Credentials = credentials.NewStaticCredentialsProvider(s3test.AccessKey, "wrong-secret", "")
	if _, err := s3.New(ctx, opts); err == nil || !strings.Contains(err.Error(), bucket) || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("New with a wrong secret: %v", err)
	}
	opts = srv.Options(bucket, "")
	opts.Endpoint = "http://127.0.0.1:1" // nothing listens there
	opts.MaxAttempts = 1
	if _, err := s3.New(ctx, opts); err == nil || !strings.Contains(err.Error(), bucket) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("New with an unreachable endpoint: %v", err)
	}
	if b, err := s3.New(ctx, srv.Options(bucket, "/a/b/")); err != nil || b.Prefix() != "a/b/" || b.Bucket() != bucket {
		t.Fatalf("New: %v (prefix %q)", err, b.Prefix())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s3.New(cctx, srv.Options(bucket, "")); !errors.Is(err, context.Canceled) {
		t.Fatalf("New with a canceled context: %v", err)
	}
}
