// Package backendtest is the conformance suite every backend.Backend must pass.
// A driver's tests call RunDriver with a constructor returning a fresh, empty
// driver; it runs the suite (Run) on a backend.Store over it, and checks what the
// Store does around the driver:
//
//	func TestConformance(t *testing.T) {
//		backendtest.RunDriver(t, func(t *testing.T) backend.Driver { ... })
//	}
package backendtest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// Run runs the conformance suite; newBackend must return an empty backend each call.
// Subtests run in parallel, each on its own backend.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b backend.Backend)
	}{
		{"CreateGetLatestList", testCreateGetLatestList},
		{"RevisionNumbering", testRevisionNumbering},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ListNumericOrder", testListNumericOrder},
		{"WorkspacesAreSeparate", testWorkspacesAreSeparate},
		{"UpdateRoundTrip", testUpdateRoundTrip},
		{"NotFound", testNotFound},
		{"Spec", testSpec},
		{"StateEntries", testStateEntries},
		{"BatchedStateEntries", testBatchedStateEntries},
		{"Previews", testPreviews},
		{"Versions", testVersions},
		{"ConcurrentUpdate", testConcurrentUpdate},
		{"Unlock", testUnlock},
		{"LargeRelease", testLargeRelease},
		{"Workspaces", testWorkspaces},
		{"ConcurrentCreateWorkspace", testConcurrentCreateWorkspace},
		{"ListProjects", testListProjects},
		{"RunLogs", testRunLogs},
		{"DriftReports", testDriftReports},
		{"Audit", testAudit},
		{"Requests", testRequests},
		{"InvalidNames", testInvalidNames},
		{"NilArguments", testNilArguments},
		{"CanceledContext", testCanceledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newBackend(t))
		})
	}
}

var ctx = context.Background()

// Release returns a small release of project/workspace at revision, with a spec.
func Release(project, workspace string, revision int) *engine.Release {
	now := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	return &engine.Release{
		Project:    project,
		Workspace:  workspace,
		Stack:      "base",
		Revision:   revision,
		Operation:  engine.OperationApply,
		Phase:      engine.PhaseApplying,
		SpecHash:   strings.Repeat("ab", 32),
		Spec:       &engine.Spec{Resources: []engine.Resource{Resource("v1:Namespace:demo", int64(revision))}},
		CreateTime: now,
		ModifyTime: now,
		WorkflowID: "kumo/" + project + "/" + workspace,
		RunID:      fmt.Sprintf("run-%d", revision),
	}
}

// Resource returns a Kubernetes resource whose attributes exercise the codec:
// int64 and float64 numbers, nested maps and lists, nulls and strings that look
// like other YAML types.
func Resource(id string, n int64) engine.Resource {
	return engine.Resource{
		ID:   id,
		Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "apps/v1",
			"kind":       "Deployment",
			"metadata": map[string]any{
				"name":        "web",
				"labels":      map[string]any{"app": "web", "version": "1.0", "on": "yes"},
				"annotations": map[string]any{"note": "line one\nline two: with colon\n", "empty": ""},
			},
			"spec": map[string]any{
				"replicas":                int64(3),
				"revisionHistoryLimit":    n,
				"progressDeadlineSeconds": int64(9007199254740993), // beyond float64 precision
				"ratio":                   1.5,
				"negative":                int64(-42),
				"tiny":                    0.001,
				"paused":                  false,
				"selector":                nil,
				"strings":                 []any{"true", "null", "0123", "1e3", "~", "- x", "#", "2025-01-01T00:00:00Z"},
				"template": map[string]any{
					"spec": map[string]any{
						"containers": []any{map[string]any{
							"name":  "web",
							"image": "nginx:1.27",
							"ports": []any{map[string]any{"containerPort": int64(80), "protocol": "TCP"}},
						}},
						"emptyMap":  map[string]any{},
						"emptyList": []any{},
					},
				},
			},
		},
		DependsOn:  []string{"v1:Namespace:demo"},
		Extensions: map[string]any{"kusionPath": "x.y", "count": int64(7), "weights": []any{int64(1), 2.25}},
	}
}

func mustCreate(t *testing.T, b backend.Backend, r *engine.Release) {
	t.Helper()
	if err := b.CreateRelease(ctx, r); err != nil {
		t.Fatalf("CreateRelease(%s): %v", backend.KeyOf(r), err)
	}
}

// EqualReleases reports how got differs from want, or "" when they are equal;
// times compare with time.Equal (locations and monotonic readings may differ).
func EqualReleases(got, want *engine.Release) string {
	if got == nil || want == nil {
		if got == want {
			return ""
		}
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	var diffs []string
	if !got.CreateTime.Equal(want.CreateTime) {
		diffs = append(diffs, fmt.Sprintf("CreateTime %v, want %v", got.CreateTime, want.CreateTime))
	}
	if !got.ModifyTime.Equal(want.ModifyTime) {
		diffs = append(diffs, fmt.Sprintf("ModifyTime %v, want %v", got.ModifyTime, want.ModifyTime))
	}
	g, w := *got, *want
	g.CreateTime, g.ModifyTime, w.CreateTime, w.ModifyTime = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	gv, wv := reflect.ValueOf(g), reflect.ValueOf(w)
	for i := 0; i < gv.NumField(); i++ {
		f := gv.Type().Field(i).Name
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			diffs = append(diffs, fmt.Sprintf("%s:\n  got  %s\n  want %s", f, describe(gv.Field(i).Interface()), describe(wv.Field(i).Interface())))
		}
	}
	return strings.Join(diffs, "\n")
}

// describe prints a value with the dynamic types of free-form values, so an int64
// that came back as float64 shows.
func describe(v any) string {
	switch x := v.(type) {
	case *engine.Spec:
		if x == nil {
			return "<nil>"
		}
		return describe(*x)
	case *engine.State:
		if x == nil {
			return "<nil>"
		}
		return describe(*x)
	case *engine.Resource:
		if x == nil {
			return "<nil>"
		}
		return describe(*x)
	}
	return fmt.Sprintf("%#v", v)
}

func requireRelease(t *testing.T, what string, got *engine.Release, err error, want *engine.Release) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := EqualReleases(got, want); d != "" {
		t.Fatalf("%s: release differs:\n%s", what, d)
	}
}

func testCreateGetLatestList(t *testing.T, b backend.Backend) {
	r1 := Release("shop", "dev", 1)
	mustCreate(t, b, r1)
	got, err := b.GetRelease(ctx, "shop", "dev", 1)
	requireRelease(t, "GetRelease 1", got, err, r1)
	got, err = b.LatestRelease(ctx, "shop", "dev")
	requireRelease(t, "LatestRelease after 1", got, err, r1)
	requireHead(t, b, r1)

	r2 := Release("shop", "dev", 2)
	r2.Operation = engine.OperationDestroy
	r2.Phase = engine.PhaseDestroying
	mustCreate(t, b, r2)
	got, err = b.LatestRelease(ctx, "shop", "dev")
	requireRelease(t, "LatestRelease after 2", got, err, r2)
	requireHead(t, b, r2)

	list, err := b.ListReleases(ctx, "shop", "dev")
	if err != nil {
		t.Fatalf("ListReleases: %v", err)
	}
	if len(list) != 2 {
		t.Fatalf("ListReleases: %d releases, want 2", len(list))
	}
	requireRelease(t, "ListReleases[0]", list[0], nil, r1)
	requireRelease(t, "ListReleases[1]", list[1], nil, r2)

	// The caller's release is not retained: changing it changes nothing stored.
	r1.Phase = engine.PhaseFailed
	r1.Spec.Resources[0].Attributes["kind"] = "Changed"
	got, err = b.GetRelease(ctx, "shop", "dev", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != engine.PhaseApplying || got.Spec.Resources[0].Attributes["kind"] != "Deployment" {
		t.Fatalf("stored release changed with the caller's copy: phase %s kind %v", got.Phase, got.Spec.Resources[0].Attributes["kind"])
	}
}

func testRevisionNumbering(t *testing.T, b backend.Backend) {
	for _, rev := range []int{0, -1} {
		if err := b.CreateRelease(ctx, Release("p", "w", rev)); err == nil {
			t.Fatalf("CreateRelease revision %d: no error", rev)
		} else if errors.Is(err, backend.ErrRevisionExists) {
			t.Fatalf("CreateRelease revision %d: %v, want a validation error", rev, err)
		}
	}
	if err := b.CreateRelease(ctx, Release("p", "w", 2)); err == nil {
		t.Fatal("CreateRelease of revision 2 as the first: no error (gap)")
	} else if errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("CreateRelease of revision 2 as the first: %v, want a gap error", err)
	}
	mustCreate(t, b, Release("p", "w", 1))
	if err := b.CreateRelease(ctx, Release("p", "w", 3)); err == nil {
		t.Fatal("CreateRelease 3 after 1: no error (gap)")
	} else if errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("CreateRelease 3 after 1: %v, want a gap error", err)
	}
	if err := b.CreateRelease(ctx, Release("p", "w", 1)); !errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("CreateRelease 1 again: %v, want ErrRevisionExists", err)
	}
	mustCreate(t, b, Release("p", "w", 2))
	if err := b.CreateRelease(ctx, Release("p", "w", 1)); !errors.Is(err, backend.ErrRevisionExists) {
		t.Fatalf("CreateRelease 1 after 2: %v, want ErrRevisionExists", err)
	}
	// The refused creates changed nothing.
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Revision != 1 || list[1].Revision != 2 || list[0].RunID != "run-1" {
		t.Fatalf("after refused creates: %d releases %v", len(list), revisionsOf(list))
	}
}

// race calls fn(0..n-1) from n goroutines released at once and returns the one
// that succeeded: exactly one must, and every other must fail with loser.
func race(t *testing.T, n int, who string, loser error, fn func(i int) error) int {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("%s: %d and %d both succeeded", who, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, loser):
			t.Fatalf("%s: %d: %v, want %v", who, i, err, loser)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: none succeeded", who)
	}
	return winner
}

func revisionsOf(rs []*engine.Release) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Revision
	}
	return out
}

func testConcurrentCreate(t *testing.T, b backend.Backend) {
	mustCreate(t, b, Release("p", "w", 1))
	winner := race(t, 20, "creators of revision 2", backend.ErrRevisionExists, func(i int) error {
		r := Release("p", "w", 2)
		r.RunID = fmt.Sprintf("creator-%d", i)
		return b.CreateRelease(ctx, r)
	})
	got, err := b.GetRelease(ctx, "p", "w", 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("creator-%d", winner); got.RunID != want {
		t.Fatalf("revision 2 has run %q, want the winner's %q", got.RunID, want)
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("after concurrent create: revisions %v, want [1 2]", revisionsOf(list))
	}
}

func testListNumericOrder(t *testing.T, b backend.Backend) {
	const n = 12
	for rev := 1; rev <= n; rev++ {
		mustCreate(t, b, Release("p", "w", rev))
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("ListReleases: revisions %v, want 1..%d", revisionsOf(list), n)
	}
	for i, r := range list {
		if r.Revision != i+1 {
			t.Fatalf("ListReleases: revisions %v, want ascending 1..%d", revisionsOf(list), n)
		}
	}
	latest, err := b.LatestRelease(ctx, "p", "w")
	if err != nil {
		t.Fatal(err)
	}
	if latest.Revision != n {
		t.Fatalf("LatestRelease: revision %d, want %d", latest.Revision, n)
	}
}

func testWorkspacesAreSeparate(t *testing.T, b backend.Backend) {
	mustCreate(t, b, Release("a", "dev", 1))
	mustCreate(t, b, Release("a", "dev", 2))
	mustCreate(t, b, Release("a", "prod", 1))
	mustCreate(t, b, Release("b", "dev", 1))
	for _, c := range []struct {
		p, w string
		n    int
	}{{"a", "dev", 2}, {"a", "prod", 1}, {"b", "dev", 1}, {"b", "prod", 0}} {
		list, err := b.ListReleases(ctx, c.p, c.w)
		if err != nil {
			t.Fatalf("ListReleases(%s, %s): %v", c.p, c.w, err)
		}
		if len(list) != c.n {
			t.Fatalf("ListReleases(%s, %s): %d releases, want %d", c.p, c.w, len(list), c.n)
		}
		for _, r := range list {
			if r.Project != c.p || r.Workspace != c.w {
				t.Fatalf("ListReleases(%s, %s) returned %s", c.p, c.w, backend.KeyOf(r))
			}
		}
	}
}

func testUpdateRoundTrip(t *testing.T, b backend.Backend) {
	r := Release("p", "w", 1)
	mustCreate(t, b, r)

	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	r.Phase = engine.PhaseFailed
	r.Error = "apply apps/v1:Deployment:demo:web: timed out\n  waiting: for \"rollout\""
	r.ModifyTime = time.Date(2025, 3, 4, 11, 0, 1, 987654321, zone)
	r.WorkflowID = "kumo/p/w"
	r.RunID = "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	r.SpecHash = strings.Repeat("0f", 32)
	r.Spec = &engine.Spec{
		Resources: []engine.Resource{
			Resource("v1:Namespace:demo", 1),
			Resource("apps/v1:Deployment:demo:web", 2),
			{ID: "hashicorp:random:random_password:db", Type: engine.Terraform,
				Attributes: map[string]any{"length": int64(16), "special": true}},
		},
		SecretStore: map[string]any{"provider": map[string]any{"vault": map[string]any{"port": int64(8200)}}},
		Context:     map[string]any{"region": "eu-west-1", "zones": []any{int64(1), int64(2)}},
	}
	r.State = &engine.State{Resources: []engine.Resource{Resource("v1:Namespace:demo", 5)}}
	if err := b.UpdateRelease(ctx, r); err != nil {
		t.Fatalf("UpdateRelease: %v", err)
	}
	got, err := b.GetRelease(ctx, "p", "w", 1)
	requireRelease(t, "GetRelease after update", got, err, r)
	got, err = b.LatestRelease(ctx, "p", "w")
	requireRelease(t, "LatestRelease after update", got, err, r)

	// Numbers keep their Go types through storage.
	spec := got.Spec.Resources[0].Attributes["spec"].(map[string]any)
	if v, ok := spec["replicas"].(int64); !ok || v != 3 {
		t.Fatalf("replicas = %#v, want int64(3)", spec["replicas"])
	}
	if v, ok := spec["progressDeadlineSeconds"].(int64); !ok || v != 9007199254740993 {
		t.Fatalf("progressDeadlineSeconds = %#v, want int64(9007199254740993)", spec["progressDeadlineSeconds"])
	}
	if v, ok := spec["ratio"].(float64); !ok || v != 1.5 {
		t.Fatalf("ratio = %#v, want float64(1.5)", spec["ratio"])
	}

	// An update of an empty state and no spec stores exactly that.
	r.Spec, r.State, r.Error = nil, &engine.State{Resources: []engine.Resource{}}, ""
	r.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, r); err != nil {
		t.Fatalf("second UpdateRelease: %v", err)
	}
	got, err = b.GetRelease(ctx, "p", "w", 1)
	requireRelease(t, "GetRelease after second update", got, err, r)
}

func testNotFound(t *testing.T, b backend.Backend) {
	if _, err := b.GetRelease(ctx, "p", "w", 1); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetRelease of an empty backend: %v, want ErrNotFound", err)
	}
	if _, err := b.LatestRelease(ctx, "p", "w"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("LatestRelease of an empty backend: %v, want ErrNotFound", err)
	}
	if _, err := b.LatestReleaseHead(ctx, "p", "w"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("LatestReleaseHead of an empty backend: %v, want ErrNotFound", err)
	}
	list, err := b.ListReleases(ctx, "p", "w")
	if err != nil || len(list) != 0 {
		t.Fatalf("ListReleases of an empty backend: %d releases, %v; want none, no error", len(list), err)
	}
	if err := b.UpdateRelease(ctx, Release("p", "w", 1)); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("UpdateRelease of a missing release: %v, want ErrNotFound", err)
	}
	mustCreate(t, b, Release("p", "w", 1))
	for _, rev := range []int{2, 0, -1} {
		if _, err := b.GetRelease(ctx, "p", "w", rev); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("GetRelease revision %d: %v, want ErrNotFound", rev, err)
		}
	}
	if err := b.UpdateRelease(ctx, Release("p", "w", 2)); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("UpdateRelease of revision 2: %v, want ErrNotFound", err)
	}
	if _, err := b.GetRelease(ctx, "p", "other", 1); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetRelease of another workspace: %v, want ErrNotFound", err)
	}
	// The failed update did not create revision 2.
	if latest, err := b.LatestRelease(ctx, "p", "w"); err != nil || latest.Revision != 1 {
		t.Fatalf("LatestRelease after failed update: %v, %v", latest, err)
	}
	unknown := strings.Repeat("c", 64)
	if _, err := b.GetSpec(ctx, unknown); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("GetSpec of an unknown hash: %v, want ErrNotFound", err)
	} else if !strings.Contains(err.Error(), unknown) {
		t.Fatalf("GetSpec of an unknown hash: error %q does not name the hash", err)
	}
	for _, bad := range []string{"", "../../etc/passwd", "zz", strings.Repeat("g", 64)} {
		if _, err := b.GetSpec(ctx, bad); !errors.Is(err, backend.ErrNotFound) {
			t.Fatalf("GetSpec(%q): %v, want ErrNotFound", bad, err)
		}
	}
}

func testSpec(t *testing.T, b backend.Backend) {
	spec := &engine.Spec{
		Resources: []engine.Resource{
			Resource("v1:Namespace:demo", 1),
			Resource("apps/v1:Deployment:demo:web", 2),
		},
		Context: map[string]any{"cluster": "kind", "replicas": int64(2)},
	}
	hash, err := b.PutSpec(ctx, spec)
	if err != nil {
		t.Fatalf("PutSpec: %v", err)
	}
	if len(hash) != 64 {
		t.Fatalf("PutSpec hash %q: want 64 hex digits", hash)
	}
	if _, err := hex.DecodeString(hash); err != nil || strings.ToLower(hash) != hash {
		t.Fatalf("PutSpec hash %q: want lower-case hex", hash)
	}
	again, err := b.PutSpec(ctx, spec)
	if err != nil || again != hash {
		t.Fatalf("PutSpec again: %q, %v; want %q", again, err, hash)
	}
	got, err := b.GetSpec(ctx, hash)
	if err != nil {
		t.Fatalf("GetSpec: %v", err)
	}
	if !reflect.DeepEqual(got, spec) {
		t.Fatalf("GetSpec:\n got  %s\n want %s", describe(got), describe(spec))
	}
	// A spec read back hashes the same.
	if h, err := b.PutSpec(ctx, got); err != nil || h != hash {
		t.Fatalf("PutSpec of the spec read back: %q, %v; want %q", h, err, hash)
	}

	other := &engine.Spec{Resources: []engine.Resource{Resource("v1:Namespace:demo", 3)}}
	h2, err := b.PutSpec(ctx, other)
	if err != nil {
		t.Fatalf("PutSpec other: %v", err)
	}
	if h2 == hash {
		t.Fatal("two different specs have the same hash")
	}
	got2, err := b.GetSpec(ctx, h2)
	if err != nil || !reflect.DeepEqual(got2, other) {
		t.Fatalf("GetSpec other: %s, %v", describe(got2), err)
	}
	// Concurrent puts of one spec all agree.
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := b.PutSpec(ctx, other)
			if err == nil && h != h2 {
				err = fmt.Errorf("hash %q, want %q", h, h2)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent PutSpec %d: %v", i, err)
		}
	}
	if _, err := b.PutSpec(ctx, nil); err == nil {
		t.Fatal("PutSpec(nil): no error")
	}
}

func testStateEntries(t *testing.T, b backend.Backend) {
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: "v1:Namespace:demo"}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("PutStateEntry before the release exists: %v, want ErrNotFound", err)
	}
	mustCreate(t, b, Release("p", "w", 1))
	mustCreate(t, b, Release("p", "w", 2))
	key2 := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 2}

	entries, err := b.ListStateEntries(ctx, key)
	if err != nil || entries == nil || len(entries) != 0 {
		t.Fatalf("ListStateEntries with none: %v, %v; want an empty map", entries, err)
	}
	if _, ok, err := b.GetStateEntry(ctx, key, "v1:Namespace:demo"); ok || err != nil {
		t.Fatalf("GetStateEntry with none: ok=%v err=%v", ok, err)
	}

	ns := Resource("v1:Namespace:demo", 1)
	dep := Resource("apps/v1:Deployment:demo:web", 2)
	tf := engine.Resource{ID: "hashicorp:random:random_password:db", Type: engine.Terraform,
		Attributes: map[string]any{"length": int64(16), "result": "s3cr3t"}}
	want := map[string]backend.StateEntry{
		ns.ID:  {ID: ns.ID, Resource: &ns},
		dep.ID: {ID: dep.ID, Resource: &dep},
		tf.ID:  {ID: tf.ID, Resource: &tf},
	}
	for _, e := range want {
		if err := b.PutStateEntry(ctx, key, e); err != nil {
			t.Fatalf("PutStateEntry(%s): %v", e.ID, err)
		}
	}
	if err := b.PutStateEntry(ctx, key, backend.StateEntry{}); err == nil {
		t.Fatal("PutStateEntry with an empty ID: no error")
	}
	checkEntries := func(what string, k backend.ReleaseKey, want map[string]backend.StateEntry) {
		t.Helper()
		got, err := b.ListStateEntries(ctx, k)
		if err != nil {
			t.Fatalf("%s: ListStateEntries: %v", what, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ListStateEntries:\n got  %s\n want %s", what, describeEntries(got), describeEntries(want))
		}
		for id, w := range want {
			g, ok, err := b.GetStateEntry(ctx, k, id)
			if err != nil || !ok {
				t.Fatalf("%s: GetStateEntry(%s): ok=%v err=%v", what, id, ok, err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: GetStateEntry(%s):\n got  %s\n want %s", what, id, describeEntry(g), describeEntry(w))
			}
		}
	}
	checkEntries("after puts", key, want)
	checkEntries("other revision", key2, map[string]backend.StateEntry{})

	// Replace: a later put for the same ID wins, including a tombstone.
	dep2 := Resource(dep.ID, 99)
	want[dep.ID] = backend.StateEntry{ID: dep.ID, Resource: &dep2}
	if err := b.PutStateEntry(ctx, key, want[dep.ID]); err != nil {
		t.Fatal(err)
	}
	want[ns.ID] = backend.StateEntry{ID: ns.ID, Deleted: true}
	if err := b.PutStateEntry(ctx, key, want[ns.ID]); err != nil {
		t.Fatal(err)
	}
	checkEntries("after replace", key, want)
	if e, ok, err := b.GetStateEntry(ctx, key, ns.ID); err != nil || !ok || !e.Deleted || e.Resource != nil {
		t.Fatalf("tombstone: %s ok=%v err=%v", describeEntry(e), ok, err)
	}

	// Entries of revision 2 are separate.
	e2 := backend.StateEntry{ID: ns.ID, Resource: &ns}
	if err := b.PutStateEntry(ctx, key2, e2); err != nil {
		t.Fatal(err)
	}
	checkEntries("revision 2", key2, map[string]backend.StateEntry{ns.ID: e2})
	checkEntries("revision 1 unchanged", key, want)

	// Concurrent puts of different IDs all land.
	var wg sync.WaitGroup
	errs := make([]error, 16)
	many := map[string]backend.StateEntry{ns.ID: e2}
	for i := range errs {
		r := Resource(fmt.Sprintf("v1:ConfigMap:demo:cm-%d", i), int64(i))
		e := backend.StateEntry{ID: r.ID, Resource: &r}
		many[r.ID] = e
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.PutStateEntry(ctx, key2, e)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent PutStateEntry %d: %v", i, err)
		}
	}
	checkEntries("revision 2 after concurrent puts", key2, many)

	// Clear drops one release's entries only, and may be repeated.
	for i := range 2 {
		if err := b.ClearStateEntries(ctx, key); err != nil {
			t.Fatalf("ClearStateEntries #%d: %v", i+1, err)
		}
		checkEntries("after clear", key, map[string]backend.StateEntry{})
		if _, ok, err := b.GetStateEntry(ctx, key, dep.ID); ok || err != nil {
			t.Fatalf("GetStateEntry after clear: ok=%v err=%v", ok, err)
		}
	}
	checkEntries("revision 2 after clearing 1", key2, many)
	// Clearing never touches the release itself.
	if _, err := b.GetRelease(ctx, "p", "w", 1); err != nil {
		t.Fatalf("GetRelease after clear: %v", err)
	}
	// A cleared release can get entries again.
	if err := b.PutStateEntry(ctx, key, want[tf.ID]); err != nil {
		t.Fatal(err)
	}
	checkEntries("put after clear", key, map[string]backend.StateEntry{tf.ID: want[tf.ID]})
}

// testBatchedStateEntries: entries put in one batch read back like entries
// put alone (list and get); a later batch holding a resource wins over an
// earlier one, an entry put alone wins over any batch, putting the same batch
// again changes nothing, and clearing drops batches too.
func testBatchedStateEntries(t *testing.T, b backend.Backend) {
	key := backend.ReleaseKey{Project: "p", Workspace: "w", Revision: 1}
	a, c := Resource("v1:ConfigMap:demo:a", 1), Resource("v1:ConfigMap:demo:c", 3)
	if err := b.PutStateEntries(ctx, key, []backend.StateEntry{{ID: a.ID, Resource: &a}}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("PutStateEntries before the release exists: %v, want ErrNotFound", err)
	}
	mustCreate(t, b, Release("p", "w", 1))
	if err := b.PutStateEntries(ctx, key, nil); err != nil {
		t.Fatalf("PutStateEntries with none: %v", err)
	}
	if err := b.PutStateEntries(ctx, key, []backend.StateEntry{{ID: a.ID}, {}}); err == nil {
		t.Fatal("PutStateEntries with an empty ID: no error")
	}
	if err := b.PutStateEntries(ctx, key, []backend.StateEntry{{ID: a.ID}, {ID: a.ID}}); err == nil {
		t.Fatal("PutStateEntries with one ID twice: no error")
	}
	check := func(what string, want map[string]backend.StateEntry) {
		t.Helper()
		got, err := b.ListStateEntries(ctx, key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ListStateEntries: %v\n got  %s\n want %s", what, err, describeEntries(got), describeEntries(want))
		}
		for id, w := range want {
			g, ok, err := b.GetStateEntry(ctx, key, id)
			if err != nil || !ok || !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: GetStateEntry(%s): ok=%v err=%v\n got  %s\n want %s", what, id, ok, err, describeEntry(g), describeEntry(w))
			}
		}
		if _, ok, err := b.GetStateEntry(ctx, key, "v1:ConfigMap:demo:none"); ok || err != nil {
			t.Fatalf("%s: GetStateEntry of a resource never recorded: ok=%v err=%v", what, ok, err)
		}
	}
	first := []backend.StateEntry{{ID: a.ID, Resource: &a}, {ID: "v1:ConfigMap:demo:b", Deleted: true}}
	for range 2 { // the same batch again (a retried step) changes nothing
		if err := b.PutStateEntries(ctx, key, first); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]backend.StateEntry{a.ID: first[0], first[1].ID: first[1]}
	check("one batch", want)

	a2 := Resource(a.ID, 2)
	later := []backend.StateEntry{{ID: a.ID, Resource: &a2}, {ID: c.ID, Resource: &c}}
	if err := b.PutStateEntries(ctx, key, later); err != nil {
		t.Fatal(err)
	}
	want[a.ID], want[c.ID] = later[0], later[1]
	check("a later batch", want)

	alone := backend.StateEntry{ID: c.ID, Deleted: true}
	if err := b.PutStateEntry(ctx, key, alone); err != nil {
		t.Fatal(err)
	}
	c9 := Resource(c.ID, 9)
	if err := b.PutStateEntries(ctx, key, []backend.StateEntry{{ID: c.ID, Resource: &c9}}); err != nil {
		t.Fatal(err)
	}
	want[c.ID] = alone
	check("an entry put alone", want)

	if err := b.ClearStateEntries(ctx, key); err != nil {
		t.Fatal(err)
	}
	check("after clear", map[string]backend.StateEntry{})
}

func describeEntry(e backend.StateEntry) string {
	return fmt.Sprintf("{ID:%q Deleted:%v Resource:%s}", e.ID, e.Deleted, describe(e.Resource))
}

func describeEntries(m map[string]backend.StateEntry) string {
	var parts []string
	for id, e := range m {
		parts = append(parts, id+"="+describeEntry(e))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// testLargeRelease: a release with a large spec and state (about 1 MB of YAML)
// round-trips whole, and its entries list whole.
func testLargeRelease(t *testing.T, b backend.Backend) {
	r := Release("p", "w", 1)
	mustCreate(t, b, r)
	key := backend.KeyOf(r)
	const n = 500
	r.Spec = &engine.Spec{}
	r.State = &engine.State{}
	for i := range n {
		res := Resource(fmt.Sprintf("v1:ConfigMap:demo:cm-%04d", i), int64(i))
		r.Spec.Resources = append(r.Spec.Resources, res)
		r.State.Resources = append(r.State.Resources, res)
		if i%4 == 0 {
			if err := b.PutStateEntry(ctx, key, backend.StateEntry{ID: res.ID, Resource: &res}); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := b.ListStateEntries(ctx, key)
	if err != nil || len(entries) != n/4 {
		t.Fatalf("ListStateEntries: %d entries, %v; want %d", len(entries), err, n/4)
	}
	r.Phase = engine.PhaseSucceeded
	if err := b.UpdateRelease(ctx, r); err != nil {
		t.Fatalf("UpdateRelease of a large release: %v", err)
	}
	got, err := b.LatestRelease(ctx, "p", "w")
	requireRelease(t, "LatestRelease of a large release", got, err, r)
	requireHead(t, b, r)
}

// requireHead checks that the latest release head of want's workspace is
// want's: revision, phase and the number of resources its state records.
func requireHead(t *testing.T, b backend.Backend, want *engine.Release) {
	t.Helper()
	head, err := b.LatestReleaseHead(ctx, want.Project, want.Workspace)
	n := 0
	if want.State != nil {
		n = len(want.State.Resources)
	}
	if err != nil || head != (backend.ReleaseHead{Revision: want.Revision, Phase: want.Phase, Operation: want.Operation, Stack: want.Stack, SpecHash: want.SpecHash, RunID: want.RunID, Resources: n}) {
		t.Fatalf("LatestReleaseHead = %+v, %v; want revision %d, %s, %s of stack %q, spec %s, %d resources", head, err, want.Revision, want.Phase, want.Operation, want.Stack, want.SpecHash, n)
	}
}
