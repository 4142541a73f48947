package client_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/backend/local"
	"github.com/kumoproj/kumo/client"
)

func TestOpenBackend(t *testing.T) {
	ctx := context.Background()
	home, dir := t.TempDir(), filepath.Join(t.TempDir(), "shared")
	for _, tc := range []struct {
		url      string
		wantRoot string
	}{
		{"", home},
		{"file://" + dir, dir},
	} {
		b, err := client.OpenBackend(ctx, client.Options{Home: home, Backend: tc.url})
		if err != nil {
			t.Fatalf("OpenBackend(%q): %v", tc.url, err)
		}
		if l, ok := b.(*local.Backend); !ok || l.Root() != tc.wantRoot {
			t.Fatalf("OpenBackend(%q): %T rooted at %v, want the local backend at %s", tc.url, b, b, tc.wantRoot)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"file://host/dir", "file:///absolute/dir"},
		{"file://", "file:///absolute/dir"},
		{"s3://", "names no bucket"},
		{"s3://b?x=1", "without credentials, port, query"},
		{"gs://bucket", "want s3://bucket[/prefix], postgres://user@host/database, https://state-service/path or file:///dir"},
		{"/plain/path", "want s3://bucket[/prefix], postgres://user@host/database, https://state-service/path or file:///dir"},
		{"postgres://u:pw@db/kumo", "holds a password: remove it and set PGPASSWORD"},
		{"https://u:pw@state.example/kumo", "holds a password: remove it and set TF_HTTP_PASSWORD"},
		{"http://state.example/kumo?lock_method=POST&nope=1", `unknown option "nope"`},
	} {
		if _, err := client.OpenBackend(ctx, client.Options{Home: home, Backend: tc.url}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenBackend(%q): %v, want an error saying %q", tc.url, err, tc.want)
		}
	}
}
