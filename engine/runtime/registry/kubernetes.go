package registry

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/engine/runtime/kubernetes"
	"github.com/kumoproj/kumo/runspec"
)

// newKubernetes connects to the cluster the settings name: their kubeconfig;
// without one, as kubectl does ($KUBECONFIG, else ~/.kube/config); without
// those, the pod's own service account (in-cluster config), which is how a
// worker deployed inside a private cluster applies to it with no kubeconfig
// leaving it.
func newKubernetes(s runspec.RuntimeSettings) (runtime.Runtime, error) {
	if s.Kubeconfig != "" || os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" || exists(homeKubeconfig) {
		return kubernetes.New(kubernetes.Config{Kubeconfig: s.Kubeconfig, Context: s.Context, Kubeconfigs: s.Kubeconfigs, AllowExecPlugins: s.AllowExecPlugins})
	}
	rc, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, fmt.Errorf("no Kubernetes cluster to apply to: the workspace names no kubeconfig (runtimes.kubernetes.kubeconfig, or --kubeconfig), KUBECONFIG is unset, %s does not exist, and this worker does not run in a pod (KUBERNETES_SERVICE_HOST is unset)", homeKubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("in-cluster Kubernetes config (no kubeconfig given): %w", err)
	}
	rt, err := kubernetes.NewForConfig(rc, 0)
	if err != nil {
		return nil, err
	}
	// The in-cluster config runs no plugin, but resources may still be sent to
	// the workspace's other clusters, and only to those.
	rt.Allow(s.Kubeconfigs, s.AllowExecPlugins)
	return rt, nil
}

// homeKubeconfig is kubectl's default kubeconfig, ~/.kube/config.
var homeKubeconfig = clientcmd.RecommendedHomeFile

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
