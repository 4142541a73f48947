package runpage

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/runspec"
)

func configMap(name string, data map[string]any) engine.Resource {
	return engine.Resource{ID: "v1:ConfigMap:demo:" + name, Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "demo"}, "data": data}}
}

func secret(data map[string]any) engine.Resource {
	return engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": map[string]any{"name": "db", "namespace": "demo"}, "data": data}}
}

// ended is an apply of project shop that ended; its resources' outcomes are
// outcomes.
func ended(outcomes ...client.ResourceOutcome) *client.RunDetails {
	start := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	return &client.RunDetails{
		RunInfo: client.RunInfo{RunID: "0f8e2c1a-0000-4000-8000-000000000001", WorkflowID: "kumo/shop/dev", Operation: "apply",
			Project: "shop", Workspace: "dev", Status: "succeeded", Revision: 2, Started: start, Closed: start.Add(3 * time.Second)},
		Resources: outcomes,
		People:    &engine.People{StartedBy: &engine.Actor{Name: "local:alice", Verified: true, Time: start}},
	}
}

func release(revision int, rs ...engine.Resource) *engine.Release {
	return &engine.Release{Project: "shop", Workspace: "dev", Revision: revision, Phase: engine.PhaseSucceeded,
		Spec: &engine.Spec{Resources: rs}, State: &engine.State{Resources: rs}}
}

func rowsByPath(t *testing.T, v View, id string) map[string]Row {
	t.Helper()
	for _, r := range v.Resources {
		if r.ID == id {
			m := map[string]Row{}
			for _, row := range r.Rows {
				m[row.Path] = row
			}
			return m
		}
	}
	t.Fatalf("no resource %s on the page: %+v", id, v.Resources)
	return nil
}

// TestUpdateShowsBothValuesAndMarksTheChange: an updated field shows its
// value before and after and is marked; the fields around it show the same
// value on both sides, unmarked; the resource's outcome and timings are
// beside it.
func TestUpdateShowsBothValuesAndMarksTheChange(t *testing.T) {
	live := configMap("web", map[string]any{"color": "blue", "size": "big"})
	desired := configMap("web", map[string]any{"color": "green", "size": "big"})
	change := engine.Diff(desired.ID, engine.Kubernetes, &desired, &live, &live)
	if change.Action != engine.Update {
		t.Fatalf("diff: %+v", change)
	}
	d := ended(client.ResourceOutcome{ID: desired.ID, Action: engine.Update, Result: runspec.NodeSucceeded,
		Started: time.Date(2026, 11, 25, 21, 0, 1, 500e6, time.UTC), Duration: 250 * time.Millisecond})
	v := Build(Input{Run: d, Plan: &client.RunPlan{Changes: []engine.Change{change}, Digest: "sha256:ab"}, Release: release(2, desired)})

	rows := rowsByPath(t, v, desired.ID)
	color := rows["data.color"]
	if !color.Changed || color.Left.Text != `"blue"` || color.Right.Text != `"green"` {
		t.Errorf("the changed field: %+v", color)
	}
	if size := rows["data.size"]; size.Changed || size.Left.Text != `"big"` || size.Right.Text != `"big"` {
		t.Errorf("an unchanged field: %+v", size)
	}
	if name := rows["metadata.name"]; name.Changed || name.Right.Text != `"web"` {
		t.Errorf("metadata.name: %+v", name)
	}
	r := v.Resources[0]
	if r.Changed != 1 || !r.Open() || r.Outcome != "succeeded" || r.OutcomeClass != "ok" || r.Start != "+1.5s" || r.Took != "250ms" {
		t.Errorf("resource: %+v", r)
	}
	if len(v.People) != 1 || v.People[0].Verb != "started" || v.People[0].Name != "local:alice" || !v.People[0].Verified {
		t.Errorf("people: %+v", v.People)
	}
	if v.Took != "3s" || v.StatusClass != "ok" || v.Refresh || v.Digest != "sha256:ab" {
		t.Errorf("page: %+v", v)
	}
	// The release the run made, with what the run said of it.
	v.Release.Label = engine.ReleaseLabel{Version: "alpha1", Message: "greener", SourceCommit: "0a1b2c3"}
	if html := render(t, v); !strings.Contains(html, "<dd>alpha1</dd>") || !strings.Contains(html, "<dd>greener</dd>") || !strings.Contains(html, "<code>0a1b2c3</code>") {
		t.Errorf("the page does not show the release's label:\n%s", html)
	}
	// Fields come in the order Diff lists them: by segment, list indexes by number.
	var order []string
	for _, row := range Build(Input{Run: d, Plan: &client.RunPlan{Changes: []engine.Change{{ID: "x", Action: engine.Update, Fields: []engine.FieldChange{
		{Path: "spec.ports[10].port", Before: 1, After: 2}, {Path: "spec.ports[2].port", Before: 1, After: 2},
		{Path: `metadata.labels["app.kubernetes.io/name"]`, Before: "a", After: "b"}, {Path: "metadata.labels.team", Before: "a", After: "b"},
		{Path: "(3 more fields change)"}}}}}}).Resources[0].Rows {
		order = append(order, row.Path)
	}
	if want := `metadata.labels["app.kubernetes.io/name"] metadata.labels.team spec.ports[2].port spec.ports[10].port (3 more fields change)`; strings.Join(order, " ") != want {
		t.Errorf("row order:\n got %s\nwant %s", strings.Join(order, " "), want)
	}
}

// TestSecretIsMaskedOnBothSides: a Secret's values show as masked on both
// sides of a change and in the fields around it, and appear nowhere in the
// rendered page.
func TestSecretIsMaskedOnBothSides(t *testing.T) {
	live := secret(map[string]any{"password": "b2xkLXNlY3JldA==", "user": "YWRtaW4="})    // old-secret, admin
	desired := secret(map[string]any{"password": "bmV3LXNlY3JldA==", "user": "YWRtaW4="}) // new-secret, admin
	desired.Attributes["stringData"] = map[string]any{"token": "clear-token"}             // as a spec may hold it
	change := engine.Diff(desired.ID, engine.Kubernetes, &desired, &live, &live)
	v := Build(Input{Run: ended(), Plan: &client.RunPlan{Changes: []engine.Change{change}}, Release: release(2, desired)})

	rows := rowsByPath(t, v, desired.ID)
	pw := rows["data.password"]
	if !pw.Changed || !pw.Left.Masked || !pw.Right.Masked || pw.Left.Text != engine.Masked || pw.Right.Text != engine.Masked {
		t.Errorf("the changed password: %+v", pw)
	}
	if user := rows["data.user"]; user.Changed || !user.Left.Masked || !user.Right.Masked {
		t.Errorf("the unchanged user: %+v", user)
	}
	if tok := rows["stringData.token"]; !tok.Left.Masked && !tok.Right.Masked {
		t.Errorf("stringData.token: %+v", tok)
	}
	html := render(t, v)
	for _, clear := range []string{"b2xkLXNlY3JldA==", "bmV3LXNlY3JldA==", "YWRtaW4=", "clear-token", "old-secret", "new-secret"} {
		if strings.Contains(html, clear) {
			t.Errorf("the page shows %q", clear)
		}
	}
	if !strings.Contains(html, engine.Masked) {
		t.Error("the page shows no masked value")
	}
}

// TestCreateAndDeleteHaveOneSide: a created resource has only its desired
// side, a deleted one only its side as last recorded.
func TestCreateAndDeleteHaveOneSide(t *testing.T) {
	created := configMap("new", map[string]any{"k": "v"})
	deleted := configMap("old", map[string]any{"gone": "yes"})
	changes := []engine.Change{
		engine.Diff(created.ID, engine.Kubernetes, &created, nil, nil),
		engine.Diff(deleted.ID, engine.Kubernetes, nil, &deleted, &deleted),
	}
	if changes[0].Action != engine.Create || changes[1].Action != engine.Delete {
		t.Fatalf("changes: %+v", changes)
	}
	v := Build(Input{Run: ended(), Plan: &client.RunPlan{Changes: changes}, Release: release(2, created), Previous: release(1, deleted)})
	for path, row := range rowsByPath(t, v, created.ID) {
		if !row.Left.Absent || row.Right.Absent || !row.Changed {
			t.Errorf("created %s: %+v", path, row)
		}
	}
	if k := rowsByPath(t, v, created.ID)["data.k"]; k.Right.Text != `"v"` {
		t.Errorf("created data.k: %+v", k)
	}
	for path, row := range rowsByPath(t, v, deleted.ID) {
		if row.Left.Absent || !row.Right.Absent || !row.Changed {
			t.Errorf("deleted %s: %+v", path, row)
		}
	}
	if gone := rowsByPath(t, v, deleted.ID)["data.gone"]; gone.Left.Text != `"yes"` {
		t.Errorf("deleted data.gone: %+v", gone)
	}
	// Without the releases, the rows are empty and the page says why.
	v = Build(Input{Run: ended(), Plan: &client.RunPlan{Changes: changes}, ReleaseError: errTest, PreviousError: errTest})
	if len(v.Resources[0].Rows)+len(v.Resources[1].Rows) != 0 || v.ReleaseNote == "" || v.RecordedNote == "" {
		t.Errorf("without releases: %+v", v)
	}
	if html := render(t, v); !strings.Contains(html, "could not be read") {
		t.Errorf("the page does not say the release could not be read:\n%s", html)
	}
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "backend down" }

func render(t *testing.T, v View) string {
	t.Helper()
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestLargePlansStayAPage: a resource that does not change shows no fields,
// and a plan of more resources than MaxResources shows that many and counts
// the rest.
func TestLargePlansStayAPage(t *testing.T) {
	var changes []engine.Change
	var rs []engine.Resource
	for i := range MaxResources + 7 {
		r := configMap(fmt.Sprintf("c%d", i), map[string]any{"k": "v"})
		rs = append(rs, r)
		changes = append(changes, engine.Diff(r.ID, engine.Kubernetes, &r, &r, &r))
	}
	v := Build(Input{Run: ended(), Plan: &client.RunPlan{Changes: changes}, Release: release(2, rs...)})
	if len(v.Resources) != MaxResources || !strings.Contains(v.MoreResources, "7 more resources") {
		t.Errorf("%d resources shown, note %q", len(v.Resources), v.MoreResources)
	}
	if r := v.Resources[0]; r.Action != engine.UnChanged || len(r.Rows) != 0 || r.Open() || r.Verb() != "unchanged" {
		t.Errorf("an unchanged resource: %+v", r)
	}
	// An unchanged resource that is not healthy is waited for again: the page says so.
	changes[0].Wait = &engine.PendingWait{Health: health.Result{Status: health.Progressing, Message: "1/3 replicas available"}}
	v = Build(Input{Run: ended(), Plan: &client.RunPlan{Changes: changes}, Release: release(2, rs...)})
	if u := v.Resources[0].Unhealthy; u != "Progressing: 1/3 replicas available" {
		t.Errorf("unhealthy: %q", u)
	}
	if html := render(t, v); !strings.Contains(html, "7 more resources are in the plan") || !strings.Contains(html, "not healthy, waited for: Progressing: 1/3 replicas available") {
		t.Error("the page does not count the resources it leaves out")
	}
}

// TestAwaitingApprovalSaysHow: a run that awaits approval of its plan
// reloads itself and says how to answer it, with the plan's digest.
func TestAwaitingApprovalSaysHow(t *testing.T) {
	d := ended()
	d.Status, d.Closed = string(runspec.StatusAwaitingApproval), time.Time{}
	v := Build(Input{Run: d, Plan: &client.RunPlan{Digest: "sha256:ab"}, Now: d.Started.Add(time.Minute)})
	if !v.Refresh || v.Took != "1m0s" || !strings.Contains(v.Awaiting, "kumo approve "+d.RunID+" --digest sha256:ab") {
		t.Errorf("page of a run awaiting approval: %+v", v)
	}
	if html := render(t, v); !strings.Contains(html, `<meta http-equiv="refresh"`) || !strings.Contains(html, "kumo reject "+d.RunID) {
		t.Errorf("page:\n%s", html)
	}
}
