package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kumoproj/kumo/engine"
)

// Request is what an external generator reads on stdin, as JSON.
type Request struct {
	Project   string `json:"project"`
	Stack     string `json:"stack"`
	Workspace string `json:"workspace"`
	App       string `json:"app"`
	// Name is the app's workload name (<project>-<stack>-<app>); generators derive
	// their objects' names from it, so that stacks never collide.
	Name string `json:"name"`
	// Namespace is where the app's Kubernetes objects go.
	Namespace string `json:"namespace"`
	// Labels are the labels kumo puts on the app's objects.
	Labels map[string]string `json:"labels"`
	// Workload is the app's workload configuration (workspace defaults merged in),
	// and WorkloadID the ID of the resource generated from it.
	Workload   map[string]any `json:"workload"`
	WorkloadID string         `json:"workloadID"`
	// Accessory is the accessory as the app wrote it.
	Accessory AccessoryRequest `json:"accessory"`
	// Config is the module's configuration: the workspace's modules.<module>.config
	// overlaid with the accessory's own fields (module excluded).
	Config map[string]any `json:"config"`
	// Context is the workspace's free context values.
	Context map[string]any `json:"context,omitempty"`
}

// AccessoryRequest names the accessory a generator is called for.
type AccessoryRequest struct {
	Name   string         `json:"name"`
	Module string         `json:"module"`
	Config map[string]any `json:"config"`
}

// Response is what an external generator prints on stdout, as JSON.
type Response struct {
	// Resources are Spec resources to add (Kusion's format).
	Resources []engine.Resource `json:"resources"`
	// Patches change the app's workload.
	Patches *Patches `json:"patches,omitempty"`
}

// Patches change an app's workload: labels and annotations on the workload and its
// pods, environment variables on every container. Values may be $kumo_path
// references, resolved when the workload is applied.
type Patches struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
}

// Call is one external generator invocation.
type Call struct {
	// Generator is the module name; Command runs it, in Dir.
	Generator string
	Command   []string
	Dir       string
	Request   Request
}

// CallResult is what a call produced. Stderr and Elapsed are set even when the
// call failed, so the run log keeps them.
type CallResult struct {
	Stdout  []byte
	Stderr  []byte
	Elapsed time.Duration
}

// Runner runs external generators; ExecRunner runs them as processes.
type Runner interface {
	Run(ctx context.Context, call Call) (CallResult, error)
}

// parseResponse reads a generator's stdout strictly.
func parseResponse(stdout []byte) (*Response, error) {
	if len(bytes.TrimSpace(stdout)) == 0 {
		return nil, fmt.Errorf("printed nothing on stdout: want a JSON response with resources")
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("printed invalid JSON on stdout: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("printed more than one JSON value on stdout")
	}
	var resp Response
	if err := decode("response", engine.Normalize(v), &resp); err != nil {
		return nil, fmt.Errorf("printed an invalid response: %w", err)
	}
	for i := range resp.Resources {
		if err := checkResource(fmt.Sprintf("response.resources[%d]", i), &resp.Resources[i]); err != nil {
			return nil, fmt.Errorf("printed an invalid response: %w", err)
		}
	}
	return &resp, nil
}

func checkResource(path string, r *engine.Resource) error {
	if r.ID == "" {
		return errorAt(join(path, "id"), "missing")
	}
	switch r.Type {
	case engine.Kubernetes:
		id, err := engine.KubernetesIDOf(r.Attributes)
		if err != nil {
			return errorAt(join(path, "attributes"), "resource %s: %v", r.ID, err)
		}
		if id != r.ID {
			return errorAt(join(path, "id"), "%q does not match its object, which is %s", r.ID, id)
		}
	case engine.Terraform:
	default:
		return errorAt(join(path, "type"), "resource %s: unknown type %q (want %s or %s)", r.ID, r.Type, engine.Kubernetes, engine.Terraform)
	}
	return nil
}

// patch applies an accessory's patches to the workload. An environment variable
// the app or another accessory already sets is a conflict, not a silent override.
func (w *workload) patch(p *Patches, owners map[string]string, by string) error {
	if p == nil {
		return nil
	}
	meta := w.res.Attributes["metadata"].(map[string]any)
	podMeta := w.podTemplate["metadata"].(map[string]any)
	for _, field := range []struct {
		key    string
		values map[string]string
	}{{"labels", p.Labels}, {"annotations", p.Annotations}} {
		for _, k := range sortedKeys(field.values) {
			for _, m := range []map[string]any{meta, podMeta} {
				sub, _ := m[field.key].(map[string]any)
				if sub == nil {
					sub = map[string]any{}
					m[field.key] = sub
				}
				sub[k] = field.values[k]
			}
		}
	}
	for _, c := range w.containers {
		env, _ := c["env"].([]any)
		for _, name := range sortedKeys(p.Env) {
			if owner, taken := owners[name]; taken {
				return fmt.Errorf("patches env %s, which %s already sets", name, owner)
			}
			env = append(env, map[string]any{"name": name, "value": p.Env[name]})
		}
		slices.SortFunc(env, func(a, b any) int {
			return strings.Compare(a.(map[string]any)["name"].(string), b.(map[string]any)["name"].(string))
		})
		if len(env) > 0 {
			c["env"] = env
		}
	}
	for name := range p.Env {
		owners[name] = by
	}
	return nil
}
