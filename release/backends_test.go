package release_test

import (
	"context"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/backend/s3"
	"github.com/kumoproj/kumo/internal/s3test"
)

var ctx = context.Background()

// forEachBackend runs fn against each backend kumo has, each subtest on a fresh,
// empty one: the local filesystem, and S3 on a real versitygw (skipped with
// -short, like the backend conformance suite's S3 run).
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend.Backend)) {
	t.Run("local", func(t *testing.T) {
		b, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fn(t, b)
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.Start(t)
		b, err := s3.New(ctx, srv.Options(srv.Bucket(t), "kumo"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, b)
	})
}
