package generate

import (
	"strings"
	"testing"
)

// A workspace whose policy rule does not compile is refused when it is
// saved, naming the file and the rule.
func TestWorkspacePoliciesCompiledWhenSaved(t *testing.T) {
	ws, err := ParseWorkspace([]byte(`policies:
  - name: limits
    match: {kinds: [Deployment]}
    expression: desired.spec.template.spec.containers.all(c, has(c.resources.limits))
    message: containers need limits
    effect: deny
`), "prod.yaml", "prod")
	if err != nil || len(ws.Policies) != 1 || ws.Policies[0].Name != "limits" {
		t.Fatalf("ParseWorkspace = %+v, %v", ws, err)
	}
	_, err = ParseWorkspace([]byte(`policies:
  - name: broken
    expression: "desired.spec.replicas >"
    message: m
    effect: warn
`), "prod.yaml", "prod")
	if err == nil || !strings.Contains(err.Error(), `prod.yaml: policies[0] "broken": expression:`) {
		t.Fatalf("ParseWorkspace of a rule with a CEL syntax error = %v, want an error naming the file and the rule", err)
	}
}
