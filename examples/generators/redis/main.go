// Command redis is an example kumo generator: for an accessory `module: redis` it
// adds a Redis Deployment and Service next to the app, and points the app at it
// through environment variables. kumo runs it with a JSON request on stdin and
// reads a JSON response from stdout; what it prints on stderr goes to the run log.
// The protocol is described in docs/generators.md.
//
// Config (modules.redis.config in a workspace, overridden by the accessory):
//
//	image: redis:7.2      the Redis image
//	maxMemory: 64mb       Redis's maxmemory setting
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

type request struct {
	Project   string            `json:"project"`
	Stack     string            `json:"stack"`
	Workspace string            `json:"workspace"`
	App       string            `json:"app"`
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels"`
	Accessory struct {
		Name string `json:"name"`
	} `json:"accessory"`
	Config map[string]any `json:"config"`
}

type resource struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Attributes map[string]any `json:"attributes"`
	DependsOn  []string       `json:"dependsOn,omitempty"`
}

type response struct {
	Resources []resource `json:"resources"`
	Patches   struct {
		Env map[string]string `json:"env"`
	} `json:"patches"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("read request: %v", err)
	}
	image, maxMemory := "redis:7.2", "64mb"
	for _, k := range sortedKeys(req.Config) {
		v, ok := req.Config[k].(string)
		switch {
		case k == "image" && ok:
			image = v
		case k == "maxMemory" && ok:
			maxMemory = v
		default:
			fail("config.%s: unknown or not a string (known: image, maxMemory)", k)
		}
	}
	name := req.Name + "-" + req.Accessory.Name
	labels := map[string]any{}
	for k, v := range req.Labels {
		labels[k] = v
	}
	labels["app.kubernetes.io/component"] = "redis"
	selector := map[string]any{"app.kubernetes.io/instance": name}
	podLabels := map[string]any{"app.kubernetes.io/instance": name, "app.kubernetes.io/component": "redis"}
	namespaceID := "v1:Namespace:" + req.Namespace
	meta := map[string]any{"name": name, "namespace": req.Namespace, "labels": labels}

	deployment := resource{
		ID:   "apps/v1:Deployment:" + req.Namespace + ":" + name,
		Type: "Kubernetes",
		Attributes: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
			"spec": map[string]any{
				"replicas": 1,
				"selector": map[string]any{"matchLabels": selector},
				"template": map[string]any{
					"metadata": map[string]any{"labels": podLabels},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "redis", "image": image,
						"args":  []any{"--maxmemory", maxMemory},
						"ports": []any{map[string]any{"containerPort": 6379, "name": "redis"}},
					}}},
				},
			},
		},
		DependsOn: []string{namespaceID},
	}
	serviceID := "v1:Service:" + req.Namespace + ":" + name
	service := resource{
		ID:   serviceID,
		Type: "Kubernetes",
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "Service", "metadata": meta,
			"spec": map[string]any{
				"selector": selector,
				"ports":    []any{map[string]any{"name": "redis", "port": 6379, "targetPort": 6379}},
			},
		},
		DependsOn: []string{namespaceID, deployment.ID},
	}
	var resp response
	resp.Resources = []resource{deployment, service}
	// The Service's cluster IP is assigned by the apiserver: a $kumo_path
	// reference makes kumo apply the Service first and fill the value in.
	resp.Patches.Env = map[string]string{
		"REDIS_HOST": "$kumo_path." + serviceID + ".spec.clusterIP",
		"REDIS_PORT": "6379",
	}
	fmt.Fprintf(os.Stderr, "redis: %s/%s for app %s (maxmemory %s)\n", req.Namespace, name, req.App, maxMemory)
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		fail("write response: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "redis: "+format+"\n", args...)
	os.Exit(1)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
