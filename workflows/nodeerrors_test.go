package workflows

import (
	"errors"
	"testing"
)

func TestNodeErrorsSayASharedFailureOnce(t *testing.T) {
	var e nodeErrors
	if err := e.err("preview"); err != nil {
		t.Fatalf("no failures: %v", err)
	}
	for _, id := range []string{"v1:ConfigMap:ns:a", "v1:ConfigMap:ns:b", "v1:ConfigMap:ns:c", "v1:ConfigMap:ns:d"} {
		e.add(id, errors.New("load kubeconfig: no configuration"))
	}
	e.add("v1:Secret:ns:s", errors.New("v1:Secret:ns:s: forbidden"))
	e.add("v1:Service:ns:svc", errors.New("port is invalid"))
	want := "preview failed for 6 resources:\n" +
		"  load kubeconfig: no configuration (4 resources: v1:ConfigMap:ns:a, v1:ConfigMap:ns:b, v1:ConfigMap:ns:c and 1 more)\n" +
		"  v1:Secret:ns:s: forbidden\n" +
		"  v1:Service:ns:svc: port is invalid"
	if got := e.err("preview").Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	var one nodeErrors
	one.add("v1:ConfigMap:ns:a", errors.New("boom"))
	if got := one.err("apply").Error(); got != "apply failed: v1:ConfigMap:ns:a: boom" {
		t.Errorf("one failure: %s", got)
	}
}
