package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// NodeName is the simulated Node of a cluster started with Options.Workloads.
const NodeName = "kumo-node"

// workloadControllers are the controller manager's controllers a cluster with
// Options.Workloads runs besides the namespace and garbage-collector ones: those
// that turn workload objects into Pods and Services into endpoints, and clean up
// Pods. The service-account and token controllers are not needed: the apiserver
// runs without the ServiceAccount admission plugin.
var workloadControllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller",
	"endpoints-controller", "endpointslice-controller", "pod-garbage-collector-controller",
}

// startWorkloads starts kube-scheduler and kwok, registers the simulated Node
// and waits until kwok has made it Ready, so that Pods created once Start
// returns are scheduled and started at once.
func (c *Cluster) startWorkloads(ctx context.Context, bins Binaries, run func(string, string, []string) (*process, error)) error {
	if _, err := run("kube-scheduler", bins.Scheduler, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}); err != nil {
		return err
	}
	kwok, err := run("kwok", bins.Kwok, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--manage-single-node=" + NodeName,
		"--cidr=10.244.0.0/16",
	})
	if err != nil {
		return err
	}
	if err := c.registerNode(ctx); err != nil {
		return err
	}
	if err := c.waitNodeReady(ctx, kwok); err != nil {
		return err
	}
	// The apiserver taints a new Node not-ready; the node lifecycle controller,
	// which is not run (it would need kwok's heartbeats), removes that taint on
	// a real cluster once the Node is Ready.
	status, body, err := c.request(ctx, http.MethodPatch, "/api/v1/nodes/"+NodeName, []byte(`{"spec":{"taints":null}}`), "application/merge-patch+json")
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%d %s", status, body)
	}
	if err != nil {
		return fmt.Errorf("localcluster: untaint node %s: %w", NodeName, err)
	}
	return nil
}

// registerNode creates the simulated Node (kwok fills in its status: capacity,
// addresses, conditions). An existing one, from an earlier start over the same
// Dir, is kept.
func (c *Cluster) registerNode(ctx context.Context) error {
	node := map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{
			"name": NodeName,
			"labels": map[string]any{
				"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "type": "kwok",
			},
			"annotations": map[string]any{"kwok.x-k8s.io/node": "fake"},
		},
	}
	body, _ := json.Marshal(node)
	status, resp, err := c.request(ctx, http.MethodPost, "/api/v1/nodes", body, "application/json")
	if err != nil {
		return fmt.Errorf("localcluster: create node %s: %w", NodeName, err)
	}
	if status != http.StatusCreated && status != http.StatusConflict {
		return fmt.Errorf("localcluster: create node %s: %d %s", NodeName, status, resp)
	}
	return nil
}

func (c *Cluster) waitNodeReady(ctx context.Context, kwok *process) error {
	var last string
	for {
		if gone, err := kwok.exited(); gone {
			return fmt.Errorf("localcluster: kwok exited while starting (%v); %s:\n%s", err, kwok.Log, kwok.logTail())
		}
		status, body, err := c.request(ctx, http.MethodGet, "/api/v1/nodes/"+NodeName, nil, "")
		switch {
		case err != nil:
			last = err.Error()
		case status != http.StatusOK:
			last = fmt.Sprintf("%d %s", status, body)
		default:
			var node struct {
				Status struct {
					Conditions []struct{ Type, Status string }
				}
			}
			if err := json.Unmarshal(body, &node); err != nil {
				return fmt.Errorf("localcluster: node %s: %w", NodeName, err)
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == "Ready" && cond.Status == "True" {
					return nil
				}
			}
			last = "not Ready yet"
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localcluster: node %s not ready (%v; last: %s); %s:\n%s",
				NodeName, context.Cause(ctx), last, kwok.Log, kwok.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// request sends one authenticated request to the apiserver, with a body of
// contentType.
func (c *Cluster) request(ctx context.Context, method, path string, body []byte, contentType string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	c.authorize(req)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, bytes.TrimSpace(b), err
}

func controllers(workloads bool) string {
	list := []string{"namespace-controller", "garbage-collector-controller"}
	if workloads {
		list = append(list, workloadControllers...)
	}
	return strings.Join(list, ",")
}
