package engine

import (
	"strings"
	"testing"
	"time"
)

func TestWaitPolicyOf(t *testing.T) {
	r := func(ext map[string]any) *Resource { return &Resource{ID: "v1:Pod:ns:p", Extensions: ext} }
	cases := []struct {
		res     *Resource
		mode    string
		timeout time.Duration
		want    WaitPolicy
		err     string
	}{
		{r(nil), "", 0, WaitPolicy{WaitHealthy, DefaultWaitTimeout}, ""},
		{r(nil), WaitApplied, time.Minute, WaitPolicy{WaitApplied, time.Minute}, ""},
		{r(map[string]any{ExtWait: "applied", ExtTimeout: "90s"}), WaitHealthy, time.Minute, WaitPolicy{WaitApplied, 90 * time.Second}, ""},
		{r(map[string]any{ExtWait: "ready"}), "", 0, WaitPolicy{}, "extensions." + ExtWait + " is ready"},
		{r(map[string]any{ExtTimeout: "soon"}), "", 0, WaitPolicy{}, "extensions." + ExtTimeout + " is soon"},
		{r(nil), "later", 0, WaitPolicy{}, `wait mode "later"`},
	}
	for _, c := range cases {
		got, err := WaitPolicyOf(c.res, c.mode, c.timeout)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v %q: error %v, want %q", c.res.Extensions, c.mode, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v %q %v: got %+v, %v; want %+v", c.res.Extensions, c.mode, c.timeout, got, err, c.want)
		}
	}
}

// A custom resource depends on the CRD of its kind in the same spec, without
// saying so.
func TestGraphOrdersCustomResourcesAfterTheirCRD(t *testing.T) {
	crd := Resource{ID: "apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "names": map[string]any{"kind": "Widget", "plural": "widgets"}},
	}}
	w := Resource{ID: "example.com/v1:Widget:ns:w", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "ns"},
	}}
	other := Resource{ID: "other.com/v1:Widget:ns:w", Type: Kubernetes, Attributes: map[string]any{
		"apiVersion": "other.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "ns"},
	}}
	s := &Spec{Resources: []Resource{w, other, crd}}
	g, err := s.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if deps := g.DependenciesOf(w.ID); len(deps) != 1 || deps[0] != crd.ID {
		t.Errorf("the Widget depends on %v, want the CRD", deps)
	}
	if deps := g.DependenciesOf(other.ID); len(deps) != 0 {
		t.Errorf("a Widget of another group depends on %v", deps)
	}
	if got := s.DefiningCRD(&w); got != crd.ID {
		t.Errorf("DefiningCRD = %q", got)
	}
}

// A workspace can count kinds as done once applied; a resource's own
// kumoproj.io/wait still wins, and a bad kind is refused naming the field.
func TestHealthSettings(t *testing.T) {
	h := HealthSettings{DoneWhenApplied: []string{"Service", "apiregistration.k8s.io/APIService"}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	res := func(apiVersion, kind string, ext map[string]any) *Resource {
		return &Resource{ID: "x", Type: Kubernetes, Extensions: ext, Attributes: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	}
	healthy := WaitPolicy{WaitHealthy, time.Minute}
	for _, c := range []struct {
		res  *Resource
		want string
	}{
		{res("v1", "Service", nil), WaitApplied},
		{res("apiregistration.k8s.io/v1", "APIService", nil), WaitApplied},
		{res("apps/v1", "Deployment", nil), WaitHealthy},
		{res("example.com/v1", "Service", nil), WaitHealthy}, // another group's Service
		{res("v1", "Service", map[string]any{ExtWait: WaitHealthy}), WaitHealthy},
	} {
		if got := h.Policy(c.res, healthy); got.Mode != c.want || got.Timeout != time.Minute {
			t.Errorf("%v %v: %+v, want mode %s", c.res.Attributes, c.res.Extensions, got, c.want)
		}
	}
	for _, bad := range []string{"", "/Service", "apps/", "apps/v1/Deployment", "Load Balancer"} {
		err := HealthSettings{DoneWhenApplied: []string{"Service", bad}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "health.doneWhenApplied[1]") {
			t.Errorf("%q: %v, want an error naming health.doneWhenApplied[1]", bad, err)
		}
	}
}
