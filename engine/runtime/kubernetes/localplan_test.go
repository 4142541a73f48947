package kubernetes

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// TestReadLivePlansConfigMapValues: a ConfigMap whose apply only gives new
// values to keys kumo owns is Planned by ReadLive with no request of its own,
// and the planned object is what the apiserver's dry-run returns; any other
// change (a key added, a key dropped, a label, an immutable ConfigMap, a
// Deployment) is left to a dry-run. With an admission policy that may see
// ConfigMap updates in the cluster, nothing is planned.
func TestReadLivePlansConfigMapValues(t *testing.T) {
	c, _, ns := setup(t)
	var log requestLog
	rc := rest.CopyConfig(c.RESTConfig())
	rc.WrapTransport = log.wrap
	rt, err := NewForConfig(rc, 0)
	if err != nil {
		t.Fatal(err)
	}
	immutable := configMap(ns, "frozen", map[string]any{"k": "1"})
	immutable.Attributes["immutable"] = true
	applied := []*engine.Resource{
		configMap(ns, "a", map[string]any{"k": "1", "j": "1"}),
		configMap(ns, "b", map[string]any{"k": "1"}),
		configMap(ns, "c", map[string]any{"k": "1", "gone": "x"}),
		configMap(ns, "d", map[string]any{"k": "1"}),
		immutable,
		deployment(ns, "web", 2),
	}
	for _, r := range applied {
		mustApply(t, rt, r)
	}
	labelled := configMap(ns, "d", map[string]any{"k": "1"})
	labelled.Attributes["metadata"].(map[string]any)["labels"] = map[string]any{"tier": "x"}
	frozen := configMap(ns, "frozen", map[string]any{"k": "2"})
	frozen.Attributes["immutable"] = true
	desired := []*engine.Resource{
		configMap(ns, "a", map[string]any{"k": "2", "j": "1"}), // a new value: planned
		configMap(ns, "b", map[string]any{"k": "1", "added": "y"}),
		configMap(ns, "c", map[string]any{"k": "2"}),
		labelled,
		frozen,
		deployment(ns, "web", 3),
	}
	ctx := context.Background()
	log.take()
	got := rt.ReadLive(ctx, desired, runtime.ReadLiveOptions{Plan: true})
	reviews := 0
	for _, req := range log.take() {
		if req == "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews" {
			reviews++
		} else if strings.Contains(req, "/configmaps/") || !strings.HasPrefix(req, "GET ") {
			t.Errorf("request %s: want only lists and one access review", req)
		}
	}
	if reviews != 1 {
		t.Errorf("%d access reviews, want 1 (may kumo patch ConfigMaps in %s)", reviews, ns)
	}
	for i, l := range got {
		if l.Err != nil || l.Resource == nil || l.Unchanged {
			t.Fatalf("%s: %+v, want a live object that changes", desired[i].ID, l)
		}
		if want := i == 0; (l.Planned != nil) != want {
			t.Errorf("%s: planned %v, want planned %v", desired[i].ID, l.Planned != nil, want)
		}
	}
	dry, err := rt.Apply(ctx, desired[0], runtime.ApplyOptions{DryRun: true, ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	planned := got[0].Planned
	if ch := engine.Diff(desired[0].ID, engine.Kubernetes, planned, dry, nil); len(ch.Fields) != 0 {
		t.Errorf("planned and dry-run differ: %+v", ch.Fields)
	}
	if ch := engine.Diff(desired[0].ID, engine.Kubernetes, planned, got[0].Resource, nil); len(ch.Fields) != 1 || !strings.Contains(ch.Fields[0].Path, "data.k") {
		t.Errorf("planned against live: %+v, want data.k alone", ch.Fields)
	}
	if planned.DependsOn[0] != desired[0].DependsOn[0] || planned.Extensions["note"] != "kept" {
		t.Errorf("planned %+v lost the resource's dependsOn or extensions", planned)
	}

	// Not asked to plan (a refresh's read): nothing planned, nothing asked
	// beyond the list.
	log.take()
	if l := rt.ReadLive(ctx, desired[:1], runtime.ReadLiveOptions{})[0]; l.Planned != nil || l.Err != nil {
		t.Errorf("without Plan: %+v, want not planned", l)
	}
	if reqs := log.take(); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET ") {
		t.Errorf("requests without Plan: %q, want the one read", reqs)
	}

	// Credentials that may not ask what they may do: the apiserver decides.
	denied := rest.CopyConfig(c.RESTConfig())
	denied.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/selfsubjectaccessreviews") {
				return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}}, Request: req,
					Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))}, nil
			}
			return rt.RoundTrip(req)
		})
	}
	drt, err := NewForConfig(denied, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l := drt.ReadLive(ctx, desired[:1], runtime.ReadLiveOptions{Plan: true}); l[0].Planned != nil || l[0].Err != nil {
		t.Errorf("access review refused: %+v, want not planned", l[0])
	}

	// A policy that may see ConfigMap updates: the apiserver decides.
	vap := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	name := "kumo-test-" + ns
	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"configmaps"}}}},
			"validations": []any{map[string]any{"expression": "true"}},
		},
	}}
	if _, err := dyn.Resource(vap).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(vap).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if l := rt.ReadLive(ctx, desired[:1], runtime.ReadLiveOptions{Plan: true})[0]; l.Planned != nil || l.Err != nil {
		t.Errorf("with a policy on ConfigMap updates: %+v, want not planned", l)
	}
}

// TestAdmissionMatches: a webhook or policy matches a ConfigMap update unless
// its rules clearly name something else.
func TestAdmissionMatches(t *testing.T) {
	rule := func(groups, ops, res string) map[string]any {
		list := func(s string) []any {
			var out []any
			for _, e := range strings.Split(s, ",") {
				out = append(out, e)
			}
			return out
		}
		return map[string]any{"apiGroups": list(groups), "operations": list(ops), "resources": list(res)}
	}
	hook := func(rules ...any) map[string]any {
		return map[string]any{"webhooks": []any{map[string]any{"name": "h", "rules": rules}}}
	}
	policy := func(rules ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"matchConstraints": map[string]any{"resourceRules": rules}}}
	}
	for i, tc := range []struct {
		obj  map[string]any
		want bool
	}{
		{hook(rule("", "UPDATE", "configmaps")), true},
		{hook(rule("*", "*", "*")), true},
		{hook(rule("", "*", "*/*")), true},
		{hook(rule("", "UPDATE", "configmaps/status")), true},
		{hook(rule("apps", "*", "*")), false},
		{hook(rule("", "CREATE,DELETE", "configmaps")), false},
		{hook(rule("", "UPDATE", "secrets,pods")), false},
		{hook(), false},
		{policy(rule("", "UPDATE", "configmaps")), true},
		{policy(rule("", "CREATE", "configmaps")), false},
		{map[string]any{"spec": map[string]any{}}, true},                              // no match constraints
		{map[string]any{"webhooks": "x"}, true},                                       // not understood
		{hook(map[string]any{"apiGroups": []any{""}, "resources": []any{"*"}}), true}, // no operations: read as any
	} {
		if got := admissionMatches(tc.obj, "", "configmaps"); got != tc.want {
			t.Errorf("%d %v: %v, want %v", i, tc.obj, got, tc.want)
		}
	}
}

// TestReadLiveAsksPlanningAlongsideTheList: told the objects are likely
// changing, ReadLive asks what planning needs (the access review, the
// admission lists) while the list of the ConfigMaps is still on its way;
// not told, only once the list found a change, and not at all when nothing
// changed. The plan is the same either way.
func TestReadLiveAsksPlanningAlongsideTheList(t *testing.T) {
	c, rt, ns := setup(t)
	applied := []*engine.Resource{configMap(ns, "a", map[string]any{"k": "1"}), configMap(ns, "b", map[string]any{"k": "1"})}
	for _, r := range applied {
		mustApply(t, rt, r)
	}
	changed := []*engine.Resource{configMap(ns, "a", map[string]any{"k": "2"}), applied[1]}
	listPath := "/api/v1/namespaces/" + ns + "/configmaps"
	const review = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	// Each request's start, and when the list's answer came back (held
	// back long enough that anything asked alongside starts before it).
	var mu sync.Mutex
	var started map[string]time.Time
	var listed time.Time
	rc := rest.CopyConfig(c.RESTConfig())
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			if _, seen := started[req.URL.Path]; !seen {
				started[req.URL.Path] = time.Now()
			}
			mu.Unlock()
			resp, err := next.RoundTrip(req)
			if req.URL.Path == listPath {
				time.Sleep(300 * time.Millisecond)
				mu.Lock()
				listed = time.Now()
				mu.Unlock()
			}
			return resp, err
		})
	}
	counted, err := NewForConfig(rc, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func(desired []*engine.Resource, changing bool) []runtime.Live {
		mu.Lock()
		started, listed = map[string]time.Time{}, time.Time{}
		mu.Unlock()
		return counted.ReadLive(ctx, desired, runtime.ReadLiveOptions{Plan: true, Changing: changing})
	}
	// Discovery of the admission kinds, once, out of the way: what is timed
	// below is the asking, not the runtime learning the cluster's kinds.
	read(changed, false)
	for _, changing := range []bool{true, false} {
		got := read(changed, changing)
		if got[0].Planned == nil || !got[1].Unchanged {
			t.Fatalf("changing %v: a planned %v, b unchanged %v; want a planned and b unchanged", changing, got[0].Planned != nil, got[1].Unchanged)
		}
		reviewed, ok := started[review]
		if !ok || listed.IsZero() {
			t.Fatalf("changing %v: requests %v, listed %v; want the list and an access review", changing, started, listed)
		}
		if alongside := reviewed.Before(listed); alongside != changing {
			t.Errorf("changing %v: the access review was asked before the list's answer: %v, want %v", changing, alongside, changing)
		}
		for path, at := range started {
			if strings.Contains(path, "admissionregistration") && at.Before(listed) != changing {
				t.Errorf("changing %v: %s asked before the list's answer: %v, want %v", changing, path, at.Before(listed), changing)
			}
		}
	}
	// Nothing changed after all: told otherwise, the review and the
	// admission lists were asked for nothing; not told, not asked.
	for _, changing := range []bool{true, false} {
		got := read(applied, changing)
		if !got[0].Unchanged || !got[1].Unchanged {
			t.Fatalf("changing %v, nothing changed: %+v", changing, got)
		}
		_, asked := started[review]
		if asked != changing {
			t.Errorf("changing %v, nothing changed: access review asked %v, want %v (requests %v)", changing, asked, changing, started)
		}
	}
}
