package registry

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/runspec"
)

// TestKubernetesWithoutKubeconfig: with no kubeconfig anywhere, the worker
// uses the pod's service account; outside a pod that is one clear error.
func TestKubernetesWithoutKubeconfig(t *testing.T) {
	homeKubeconfig = filepath.Join(t.TempDir(), "config") // does not exist
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, err := New().For(engine.Kubernetes, runspec.RuntimeSettings{})
	if err == nil || !strings.Contains(err.Error(), "no Kubernetes cluster to apply to") || !strings.Contains(err.Error(), "does not run in a pod") {
		t.Fatalf("outside a pod: %v", err)
	}
	// In a pod (the service's address is set) the service account is used:
	// here its token is missing, and the error says it was the in-cluster config.
	t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
	_, err = New().For(engine.Kubernetes, runspec.RuntimeSettings{})
	if err == nil || !strings.Contains(err.Error(), "in-cluster Kubernetes config") {
		t.Fatalf("in a pod without a token: %v", err)
	}
	// A kubeconfig, when given, wins.
	_, err = New().For(engine.Kubernetes, runspec.RuntimeSettings{Kubeconfig: filepath.Join(t.TempDir(), "missing")})
	if err == nil || strings.Contains(err.Error(), "in-cluster") {
		t.Fatalf("with a kubeconfig: %v", err)
	}
}
