package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kumoproj/kumo/backend"
)

func requireRunLog(t *testing.T, b backend.Backend, runID, want string) {
	t.Helper()
	got, err := b.RunLog(ctx, runID)
	if err != nil {
		t.Fatalf("RunLog(%s): %v", runID, err)
	}
	if string(got) != want {
		t.Fatalf("RunLog(%s):\n got  %q\n want %q", runID, got, want)
	}
}

func testRunLogs(t *testing.T, b backend.Backend) {
	if _, err := b.RunLog(ctx, "run-1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("RunLog of a run without parts: %v, want ErrNotFound", err)
	}
	// Parts come back in part-name order, not in the order they were put.
	for _, p := range []struct{ part, data string }{{"000002", "c\n"}, {"000000", "a\n"}, {"000001", "b\n"}} {
		if err := b.PutRunLog(ctx, "run-1", p.part, []byte(p.data)); err != nil {
			t.Fatalf("PutRunLog(run-1, %s): %v", p.part, err)
		}
	}
	requireRunLog(t, b, "run-1", "a\nb\nc\n")
	// Putting a part again replaces it: a retried activity does not duplicate lines.
	if err := b.PutRunLog(ctx, "run-1", "000001", []byte("B1\nB2\n")); err != nil {
		t.Fatal(err)
	}
	requireRunLog(t, b, "run-1", "a\nB1\nB2\nc\n")

	// Order is by the part name itself, whatever a backend appends to it: "x"
	// comes before "x-y" even though "x.log" sorts after "x-y.log".
	for _, part := range []string{"x.y", "x-y", "X", "x", "x_y", "x0"} {
		if err := b.PutRunLog(ctx, "run-2", part, []byte(part+";")); err != nil {
			t.Fatalf("PutRunLog(run-2, %s): %v", part, err)
		}
	}
	requireRunLog(t, b, "run-2", "X;x;x-y;x.y;x0;x_y;")
	requireRunLog(t, b, "run-1", "a\nB1\nB2\nc\n")

	// Bytes come back exactly: every byte value, no line ending added.
	var all bytes.Buffer
	for i := range 256 {
		all.WriteByte(byte(i))
	}
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	if err := b.PutRunLog(ctx, "run-3", "a", all.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := b.PutRunLog(ctx, "run-3", "b", []byte(big)); err != nil {
		t.Fatal(err)
	}
	requireRunLog(t, b, "run-3", all.String()+big)

	// An empty part is a part: the run has a log, an empty one.
	if err := b.PutRunLog(ctx, "run-4", "a", nil); err != nil {
		t.Fatal(err)
	}
	requireRunLog(t, b, "run-4", "")

	// Parts written at once all land.
	var wg sync.WaitGroup
	errs := make([]error, 16)
	var want strings.Builder
	for i := range errs {
		fmt.Fprintf(&want, "line %02d\n", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.PutRunLog(ctx, "run-5", fmt.Sprintf("%06d", i), fmt.Appendf(nil, "line %02d\n", i))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent PutRunLog %d: %v", i, err)
		}
	}
	requireRunLog(t, b, "run-5", want.String())
}
