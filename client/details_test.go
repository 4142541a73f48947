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
	d := staticDetails("apply", req, in)
	for _, want := range []string{"**kumo apply** of project `shop`, workspace `dev`, stack `dev`", "stack directory `/src/shop/dev`", "parallelism: 10", "given at start (`--yes`)", "client: `"} {
		if !strings.Contains(d, want) {
			t.Errorf("details lack %q:\n%s", want, d)
		}
	}

	in.SpecHash, req.StackDir = "abc123", ""
	if d := staticDetails("apply", req, in); !strings.Contains(d, "`abc123`, from a spec file") {
		t.Errorf("spec-file details:\n%s", d)
	}
	req.rollbackOf = 3
	if got := staticSummary("rollback", req); got != "rollback shop/dev to revision 3" {
		t.Errorf("rollback summary %q", got)
	}
	if d := staticDetails("rollback", req, in); !strings.Contains(d, "revision 3's, `abc123`") {
		t.Errorf("rollback details:\n%s", d)
	}
}
