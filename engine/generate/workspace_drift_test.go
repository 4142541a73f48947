package generate

import (
	"strings"
	"testing"
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
	for doc, want := range map[string]string{
		"drift:\n  ignore:\n  - kind: Deployment\n    jsonPointer: [/spec]\n": `unknown field "jsonPointer"`,
		"drift:\n  ignore:\n  - kind: Deployment\n    jsonPointers: [spec]\n": "dev.yaml: drift.ignore[0]: jsonPointers[0]",
	} {
		_, err := ParseWorkspace([]byte(doc), "dev.yaml", "dev")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dev.yaml") {
			t.Errorf("%q: error %v, want one with %q", doc, err, want)
		}
	}
}
