package release_test

import (
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/release"
)

// TestBeginTellsARetryItsPreviewsAreKept: a run's first Begin is told of no
// kept previews; once the run kept them, its Begin again (the workflow task
// run a second time) is told, and reads them back; a finished release keeps
// none, and another run's release has none of its own.
func TestBeginTellsARetryItsPreviewsAreKept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend.Backend) {
		m, rs, spec, info := beginRun1(t, b)
		if info.PreviewRecorded {
			t.Fatal("a new release says its previews are kept")
		}
		if _, err := m.RecordedPreview(ctx, info.Key); err == nil {
			t.Fatal("RecordedPreview with none kept: no error")
		}
		p := backend.RecordedPreview{Changes: []engine.Change{{ID: "v1:Namespace:a", Type: engine.Kubernetes, Action: engine.Create}}}
		if err := m.RecordPreview(ctx, info.Key, p); err != nil {
			t.Fatal(err)
		}
		again, err := m.Begin(ctx, begin("p", "w", "run-1", spec))
		if err != nil {
			t.Fatal(err)
		}
		if !again.PreviewRecorded || again.Key != info.Key {
			t.Fatalf("Begin again after the previews were kept = %+v, want revision %d with PreviewRecorded", again, info.Key.Revision)
		}
		got, err := m.RecordedPreview(ctx, info.Key)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Fatalf("RecordedPreview = %+v, %v; want %+v", got, err, p)
		}

		if _, err := m.Finish(ctx, release.FinishInput{Key: info.Key, Phase: engine.PhaseSucceeded}); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.GetPreview(ctx, info.Key); ok || err != nil {
			t.Fatalf("previews kept after the finish: %v", err)
		}
		rs.set("run-2", true)
		next, err := m.Begin(ctx, begin("p", "w", "run-2", spec))
		if err != nil {
			t.Fatal(err)
		}
		if next.PreviewRecorded || next.Key.Revision != 2 {
			t.Fatalf("the next run's Begin = %+v, want revision 2 without kept previews", next)
		}
	})
}
