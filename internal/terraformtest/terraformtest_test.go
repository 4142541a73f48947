package terraformtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/internal/localcluster"
)

// TestVersionsMatchBuildScript keeps the names Ensure looks for in sync with what
// hack/build-tools.sh builds.
func TestVersionsMatchBuildScript(t *testing.T) {
	root, err := localcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "build-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"TERRAFORM_VERSION":         TerraformVersion,
		"PROVIDER_LOCAL_VERSION":    ProviderLocalVersion,
		"PROVIDER_KUMOTEST_VERSION": ProviderKumotestVersion,
	} {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(script)
		if m == nil || string(m[1]) != want {
			t.Errorf("hack/build-tools.sh %s = %q, terraformtest has %q", name, m, want)
		}
	}
	if !strings.HasSuffix(LocalProvider, "/"+ProviderLocalVersion[1:]) {
		t.Errorf("LocalProvider %s is not version %s", LocalProvider, ProviderLocalVersion)
	}
}

// TestEnsure: the tools exist and the script computes the test provider's tag as
// Ensure does (else Ensure would rebuild it on every run).
func TestEnsure(t *testing.T) {
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
