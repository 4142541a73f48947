package client

import (
	"strings"
	"testing"

	"github.com/kumoproj/kumo/runspec"
)

func TestStaticSummaryAndDetails(t *testing.T) {
	req := Request{Project: "shop", Workspace: "dev", Stack: "dev", StackDir: "/src/shop/dev"}
	in := runspec.RunInput{Project: "shop", Workspace: "dev", Parallelism: 10, AutoApprove: true}
	if got := staticSummary("apply", req); got != "apply shop/dev" {
		t.Errorf("summary %q", got)
	}
	d := staticDetails("apply", req, in, "")
	for _, want := range []string{"**kumo apply** of project `shop`, workspace `dev`, stack `dev`", "stack directory `/src/shop/dev`", "parallelism: 10", "given at start (`--yes`)", "client: `"} {
		if !strings.Contains(d, want) {
			t.Errorf("details lack %q:\n%s", want, d)
		}
	}

	if strings.Contains(d, "page") {
		t.Errorf("details link a page with no server of pages:\n%s", d)
	}
	// The Web UI puts the run's ID for {runId}, which is not known before
	// the run starts.
	if d := staticDetails("apply", req, in, "http://127.0.0.1:8080"); !strings.Contains(d, "- page: [http://127.0.0.1:8080/runs/{runId}](http://127.0.0.1:8080/runs/{runId})") {
		t.Errorf("details do not link the run's page:\n%s", d)
	}

	in.SpecHash, req.StackDir = "abc123", ""
	if d := staticDetails("apply", req, in, ""); !strings.Contains(d, "`abc123`, from a spec file") {
		t.Errorf("spec-file details:\n%s", d)
	}
	req.rollbackOf = 3
	if got := staticSummary("rollback", req); got != "rollback shop/dev to revision 3" {
		t.Errorf("rollback summary %q", got)
	}
	if d := staticDetails("rollback", req, in, ""); !strings.Contains(d, "revision 3's, `abc123`") {
		t.Errorf("rollback details:\n%s", d)
	}
}
