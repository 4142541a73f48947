package localcluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kumoproj/kumo/internal/hydratest"
	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/internal/localcluster/localclustertest"
	"github.com/kumoproj/kumo/internal/s3test"
	"github.com/kumoproj/kumo/internal/terraformtest"
	"github.com/kumoproj/kumo/internal/vaulttest"
)

func TestMain(m *testing.M) { localclustertest.Main(m) }

// TestVersionsMatchBuildScript keeps the binary names Start looks for in sync with
// what hack/build-tools.sh builds.
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
		"ETCD_VERSION": localcluster.EtcdVersion, "KUBE_VERSION": localcluster.KubernetesVersion,
		"KWOK_VERSION":      localcluster.KwokVersion,
		"VERSITYGW_VERSION": s3test.VersitygwVersion,
		"TERRAFORM_VERSION": terraformtest.TerraformVersion, "PROVIDER_LOCAL_VERSION": terraformtest.ProviderLocalVersion,
		"PROVIDER_KUMOTEST_VERSION": terraformtest.ProviderKumotestVersion,
		"HYDRA_VERSION":             hydratest.Version,
		"VAULT_VERSION":             vaulttest.Version,
	} {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(script)
		if m == nil || string(m[1]) != want {
			t.Errorf("hack/build-tools.sh %s = %q, localcluster has %q", name, m, want)
		}
	}
}

func TestKubectlWithKubeconfig(t *testing.T) {
	c := localclustertest.Start(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	out, err := exec.Command(kubectl, "--kubeconfig", c.Kubeconfig, "get", "ns", "default", "-o", "name").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "namespace/default" {
		t.Fatalf("kubectl get ns: %v\n%s", err, out)
	}
	out, err = exec.Command(kubectl, "--kubeconfig", c.Kubeconfig, "version", "-o", "json").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"gitVersion": "`+localcluster.KubernetesVersion+`"`) {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	if len(c.Processes()) != 3 || !c.Running() {
		t.Errorf("processes %+v", c.Processes())
	}
}

// TestDetachedLoadStop is what hack/cluster does: start detached, find the
// cluster again through its state file, stop it from there.
func TestDetachedLoadStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	dir := t.TempDir()
	begin := time.Now()
	c, err := localcluster.Start(context.Background(), localcluster.Options{Dir: dir, Detach: true, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("detached cluster started in %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop the cluster: %v", err)
		}
	})

	loaded, err := localcluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Running() || loaded.Server != c.Server || loaded.Token != c.Token {
		t.Fatalf("loaded %+v, processes %+v", loaded, loaded.Processes())
	}
	if err := loaded.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := loaded.RemoveData(); err == nil {
		t.Error("RemoveData on a running cluster succeeded")
	}
	begin = time.Now()
	if err := loaded.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v", time.Since(begin).Round(time.Millisecond))
	// The processes were stopped through the state file; c, their parent, reaps
	// them a moment later.
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range c.Processes() {
		for p.Running && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			p.Running = isRunning(c, p.Name)
		}
		if p.Running {
			t.Errorf("%s still running", p.Name)
		}
	}
	again, err := localcluster.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Running() || len(again.Processes()) != 0 {
		t.Errorf("after Stop, state still lists %+v", again.Processes())
	}

	// A failed run keeps the directory for its logs, without etcd's data.
	if err := loaded.RemoveData(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
		t.Errorf("etcd's data is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "etcd.log")); err != nil {
		t.Errorf("the logs went with the data: %v", err)
	}
}

func isRunning(c *localcluster.Cluster, name string) bool {
	for _, p := range c.Processes() {
		if p.Name == name {
			return p.Running
		}
	}
	return false
}
