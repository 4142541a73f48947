package generate

import (
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/engine/drift"
)

// TestParseWorkspaceDrift: drift.ignore rules are read from the workspace file,
// and a bad one (an unknown key, an invalid pointer) is an error naming the file
// and the entry.
func TestParseWorkspaceDrift(t *testing.T) {
	ws, err := ParseWorkspace([]byte("drift:\n  keep: 5\n  ignore:\n  - kind: Deployment\n    jsonPointers: [/spec/replicas]\n  - name: web\n    managedFieldsManagers: [hpa-controller]\n"), "dev.yaml", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Drift.Keep != 5 || len(ws.Drift.Ignore) != 2 || ws.Drift.Ignore[1].ManagedFieldsManagers[0] != "hpa-controller" {
		t.Errorf("drift config %+v", ws.Drift)
	}
	ws, err = ParseWorkspace([]byte("drift:\n  webhook: https://hooks.example.com/kumo\n  remediation: {backoff: 2m, maxBackoff: 1h, limit: 5, approval: required}\n"), "dev.yaml", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if p := ws.Drift.Remediation; time.Duration(p.Backoff) != 2*time.Minute || p.Limit != 5 || !p.ApprovalRequired() || ws.Drift.Webhook.URL != "https://hooks.example.com/kumo" {
		t.Errorf("remediation and webhook: %+v", ws.Drift)
	}
	ws, err = ParseWorkspace([]byte("drift:\n  webhook:\n    url: http://hooks.internal.example/kumo?token=t0k\n    secretEnv: KUMO_WEBHOOK_DEV\n    allowedHosts: [\"*.internal.example\"]\n    allowPrivate: true\n"), "dev.yaml", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if h := ws.Drift.Webhook; h.SecretEnv != "KUMO_WEBHOOK_DEV" || !h.AllowPrivate || len(h.AllowedHosts) != 1 {
		t.Errorf("webhook object: %+v", h)
	}
	// A project names its own URL and secret but keeps the workspace's allowances.
	m := ws.Drift.Merge(drift.Config{Webhook: drift.Webhook{URL: "https://other.example/x", SecretEnv: "KUMO_WEBHOOK_P"}})
	if h := m.Webhook; h.URL != "https://other.example/x" || h.SecretEnv != "KUMO_WEBHOOK_P" || !h.AllowPrivate || h.HostAllowed() == nil {
		t.Errorf("merged webhook: %+v", h)
	}
	for doc, want := range map[string]string{
		"drift:\n  webhook: hooks.example.com\n":                                          "dev.yaml: drift.webhook",
		"drift:\n  webhook: {url: https://h.example, allowPrivat: true}\n":                `unknown field "allowPrivat"`,
		"drift:\n  webhook: {url: https://h.example, secretEnv: AWS_SECRET_ACCESS_KEY}\n": "drift.webhook: secretEnv",
		"drift:\n  webhook: {url: https://h.example, allowedHosts: [x.example]}\n":        "host h.example is not in drift.webhook.allowedHosts",
		"drift:\n  webhook: {secretEnv: KUMO_WEBHOOK_X}\n":                                "drift.webhook: url: missing",
		"drift:\n  webhook: \"http://h.example/%zz?token=t0k\"\n":                         "drift.webhook: url: not a valid URL",
		"drift:\n  remediation: {backoff: 5}\n":                                           "a duration is a string",
		"drift:\n  remediation: {approval: sometimes}\n":                                  "dev.yaml: drift.remediation: approval",
		"drift:\n  ignore:\n  - kind: Deployment\n    jsonPointer: [/spec]\n":             `unknown field "jsonPointer"`,
		"drift:\n  ignore:\n  - kind: Deployment\n    jsonPointers: [spec]\n":             "dev.yaml: drift.ignore[0]: jsonPointers[0]",
	} {
		_, err := ParseWorkspace([]byte(doc), "dev.yaml", "dev")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dev.yaml") || strings.Contains(err.Error(), "t0k") {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}

// TestParseWorkspaceApproval: the approval section is read, and a policy that
// cannot be meant (rules without a required count, a negative count) is an
// error naming the file and the field.
func TestParseWorkspaceApproval(t *testing.T) {
	ws, err := ParseWorkspace([]byte("approval:\n  required: 2\n  groups: [sre]\n  fourEyes: true\n"), "prod.yaml", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if p := ws.Approval; p.Required != 2 || len(p.Groups) != 1 || p.Groups[0] != "sre" || !p.FourEyes || !p.Enforced() {
		t.Errorf("approval %+v", p)
	}
	for doc, want := range map[string]string{
		"approval:\n  required: -1\n":                  "approval.required",
		"approval:\n  fourEyes: true\n":                "need approval.required",
		"approval:\n  groups: [sre]\n":                 "need approval.required",
		"approval:\n  required: 1\n  groups: [\"\"]\n": "approval.groups[0]",
		"approval:\n  requird: 1\n":                    `unknown field "requird"`,
	} {
		_, err := ParseWorkspace([]byte(doc), "prod.yaml", "prod")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "prod.yaml") {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}
