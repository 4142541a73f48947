package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kumoproj/kumo/internal/terraformtest"
)

// TestTerraformCacheOutlivesItsMirror is the fault of issue 17 as a user met it:
// apply a Terraform resource with TF_CLI_CONFIG_FILE naming a mirror in a
// temporary directory, delete that directory, make a new mirror elsewhere and
// apply again with a new home. The working directories, shared by both homes,
// are initialised again instead of failing with "Required plugins are not
// installed".
func TestTerraformCacheOutlivesItsMirror(t *testing.T) {
	t.Parallel()
	tools := terraformtest.Ensure(t)
	workDir := t.TempDir() // shared by both homes
	spec := fmt.Sprintf(`resources:
- id: hashicorp:local:local_file:motd
  type: Terraform
  attributes: {filename: %q, content: hello}
  extensions:
    provider: %s
    resourceType: local_file
`, filepath.Join(t.TempDir(), "motd"), terraformtest.LocalProvider)

	first := t.TempDir()
	e := newEnv(t)
	e.environ = append(tools.Env(workDir), "TF_CLI_CONFIG_FILE="+tools.MirrorAt(t, first))
	e.ok("apply", "--yes", "-f", e.writeSpec("spec.yaml", spec))
	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}

	again := newEnv(t)
	again.environ = append(tools.Env(workDir), "TF_CLI_CONFIG_FILE="+tools.MirrorAt(t, t.TempDir()))
	again.ok("apply", "--yes", "-f", again.writeSpec("spec.yaml", spec))
	if rows := again.releases(); len(rows) != 1 || rows[0].Phase != "succeeded" {
		t.Errorf("releases of the new home: %+v", rows)
	}
}
