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
