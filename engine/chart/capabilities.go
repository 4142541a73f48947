package chart

import (
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Discover asks the cluster of cfg what Helm puts in .Capabilities when it
// installs there: its version and the API versions it serves (group/version
// and group/version/kind, as helm install finds them with discovery).
func Discover(cfg *rest.Config) (Capabilities, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Capabilities{}, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return Capabilities{}, fmt.Errorf("the cluster's version, for the chart's .Capabilities: %w", err)
	}
	set, err := action.GetVersionSet(dc)
	if err != nil {
		return Capabilities{}, fmt.Errorf("the cluster's API versions, for the chart's .Capabilities: %w", err)
	}
	return Capabilities{KubeVersion: v.GitVersion, APIVersions: set}, nil
}
