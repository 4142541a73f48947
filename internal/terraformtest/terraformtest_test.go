package terraformtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// TestEnsure: the tools exist and the script computes the test provider's tag as
// Ensure does (else Ensure would rebuild it on every run).
func TestEnsure(t *testing.T) {
	if !strings.HasSuffix(LocalProvider, "/"+ProviderLocalVersion[1:]) {
		t.Errorf("LocalProvider %s is not version %s", LocalProvider, ProviderLocalVersion)
	}
	tools := Ensure(t)
	out, err := exec.Command(filepath.Join(tools.PathDir, "terraform"), "version").CombinedOutput()
	if err != nil || (os.Getenv("KUMO_TEST_TERRAFORM") == "" && !strings.Contains(string(out), "Terraform "+TerraformVersion)) {
		t.Fatalf("terraform version: %v\n%s", err, out)
	}
	tag, err := kumotestTag()
	if err != nil {
		t.Fatal(err)
	}
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", `source <(sed -n '/^kumotest_tag()/,/^}/p; /^PROVIDER_KUMOTEST_VERSION=/p' hack/build-tools.sh); root=$PWD; kumotest_tag`)
	cmd.Dir = root
	script, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(script)); got != tag {
		t.Errorf("hack/build-tools.sh tags the test provider %q, Ensure looks for %q", got, tag)
	}
}
