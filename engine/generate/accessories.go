package generate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// Built-in accessory modules.
const (
	NetworkModule    = "network"
	KubernetesModule = "kubernetes"
)

// accessoryFunc builds a built-in accessory's resources from its config (merged
// with the workspace's defaults, without the module key).
type accessoryFunc func(a *appContext, path string, w *workload, config map[string]any) ([]engine.Resource, error)

var accessories = map[string]accessoryFunc{
	NetworkModule:    network,
	KubernetesModule: passthrough,
}

// isBuiltin reports whether name is a built-in module, which no external generator
// may replace.
func isBuiltin(name string) bool {
	return name == ServiceModule || name == JobModule || accessories[name] != nil
}

// Network exposes the workload's ports through a Service.
type Network struct {
	// Type is the Service type: ClusterIP (default), NodePort or LoadBalancer.
	Type  string `json:"type,omitempty"`
	Ports []Port `json:"ports"`
}

// Port is one Service port.
type Port struct {
	Name string `json:"name,omitempty"`
	Port int64  `json:"port"`
	// TargetPort is the container port (default: Port).
	TargetPort int64 `json:"targetPort,omitempty"`
	// Protocol is TCP (default), UDP or SCTP.
	Protocol string `json:"protocol,omitempty"`
}

var serviceTypes = []string{"ClusterIP", "NodePort", "LoadBalancer"}
var protocols = []string{"TCP", "UDP", "SCTP"}

func network(a *appContext, path string, w *workload, config map[string]any) ([]engine.Resource, error) {
	var n Network
	if err := decode(path, config, &n); err != nil {
		return nil, err
	}
	if len(n.Ports) == 0 {
		return nil, errorAt(join(path, "ports"), "missing: a network accessory needs at least one port")
	}
	if n.Type != "" && !slices.Contains(serviceTypes, n.Type) {
		return nil, errorAt(join(path, "type"), "unknown Service type %q (want %s)", n.Type, strings.Join(serviceTypes, ", "))
	}
	ports := make([]any, 0, len(n.Ports))
	seen := map[string]bool{}
	for i, p := range n.Ports {
		pp := fmt.Sprintf("%s[%d]", join(path, "ports"), i)
		if err := checkPort(join(pp, "port"), p.Port); err != nil {
			return nil, err
		}
		target := p.TargetPort
		if target == 0 {
			target = p.Port
		}
		if err := checkPort(join(pp, "targetPort"), target); err != nil {
			return nil, err
		}
		protocol := p.Protocol
		if protocol == "" {
			protocol = "TCP"
		}
		if !slices.Contains(protocols, protocol) {
			return nil, errorAt(join(pp, "protocol"), "unknown protocol %q (want %s)", protocol, strings.Join(protocols, ", "))
		}
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("%s-%d", strings.ToLower(protocol), p.Port)
		}
		if seen[name] {
			return nil, errorAt(pp, "port name %q is used twice", name)
		}
		seen[name] = true
		ports = append(ports, map[string]any{"name": name, "port": p.Port, "targetPort": target, "protocol": protocol})
	}
	obj := object("v1", "Service", a.name, a.namespace, a.labels, nil)
	spec := map[string]any{"selector": stringMap(a.selector), "ports": ports}
	if n.Type != "" {
		spec["type"] = n.Type
	}
	obj["spec"] = spec
	id, _ := engine.KubernetesIDOf(obj)
	return []engine.Resource{{ID: id, Type: engine.Kubernetes, Attributes: obj, DependsOn: []string{a.namespaceID, w.res.ID}}}, nil
}

// Passthrough applies plain Kubernetes manifests as they are written.
type Passthrough struct {
	Manifests []map[string]any `json:"manifests"`
}

// clusterScoped are the built-in kinds that get no namespace. Any other manifest
// without metadata.namespace lands in the app's namespace; write
// `namespace: ""` to keep a custom cluster-scoped kind out of it.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "StorageClass": true, "PriorityClass": true, "IngressClass": true,
	"RuntimeClass": true, "MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"APIService": true, "CSIDriver": true, "VolumeAttachment": true,
}

func passthrough(a *appContext, path string, _ *workload, config map[string]any) ([]engine.Resource, error) {
	var p Passthrough
	if err := decode(path, config, &p); err != nil {
		return nil, err
	}
	if len(p.Manifests) == 0 {
		return nil, errorAt(join(path, "manifests"), "missing: list the Kubernetes objects to apply")
	}
	out := make([]engine.Resource, 0, len(p.Manifests))
	for i, m := range p.Manifests {
		mp := fmt.Sprintf("%s[%d]", join(path, "manifests"), i)
		obj := engine.Normalize(m).(map[string]any) // a deep copy: the app's config stays as written
		meta, ok := obj["metadata"].(map[string]any)
		if !ok {
			return nil, errorAt(join(mp, "metadata"), "missing: a manifest needs metadata.name")
		}
		kind, _ := obj["kind"].(string)
		ns, hasNS := meta["namespace"]
		if !hasNS && !clusterScoped[kind] {
			meta["namespace"] = a.namespace
			ns = a.namespace
		} else if ns == "" {
			delete(meta, "namespace")
		}
		labels, _ := meta["labels"].(map[string]any)
		merged := stringMap(a.labels)
		maps.Copy(merged, labels) // the user's labels win: nothing selects on these
		meta["labels"] = merged
		id, err := engine.KubernetesIDOf(obj)
		if err != nil {
			return nil, errorAt(mp, "%v", err)
		}
		res := engine.Resource{ID: id, Type: engine.Kubernetes, Attributes: obj}
		if ns == a.namespace {
			res.DependsOn = []string{a.namespaceID}
		}
		out = append(out, res)
	}
	return out, nil
}
