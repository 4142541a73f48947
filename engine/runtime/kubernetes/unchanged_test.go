package kubernetes

import (
	"context"
	"fmt"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"sigs.k8s.io/yaml"
)

// chartObjects are objects as a chart writes them, leaving the apiserver to
// default what they leave out: a Secret of stringData, a Service port and a
// container port without protocol (a key of their lists), a Deployment with
// env and a ServiceAccount, a Role and its binding.
const chartObjects = `
- apiVersion: v1
  kind: Secret
  metadata: {name: app}
  stringData: {token: "token-1"}
  data: {plain: cGxhaW4=}
- apiVersion: v1
  kind: Service
  metadata: {name: app}
  spec:
    selector: {app: app}
    ports:
    - {name: http, port: 80, targetPort: 8080}
    - {name: dns, port: 53, protocol: UDP}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: app}
  spec:
    replicas: 1
    selector:
      matchLabels: {app: app}
    template:
      metadata:
        labels: {app: app}
        annotations: {example.com/version: "1"}
      spec:
        containers:
        - name: app
          image: registry.k8s.io/pause:3.10
          env:
          - {name: VERSION, value: "1"}
          ports:
          - {containerPort: 8080}
          - {containerPort: 53, protocol: UDP}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: app}
  rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch]
`

// TestReadLiveFindsChartObjectsUnchanged: objects as charts write them, once
// applied, are found unchanged by the list alone (no dry-run), write-only
// and server-defaulted list keys included.
func TestReadLiveFindsChartObjectsUnchanged(t *testing.T) {
	_, rt, ns := setup(t)
	var objs []map[string]any
	if err := yaml.Unmarshal([]byte(chartObjects), &objs); err != nil {
		t.Fatal(err)
	}
	var desired []*engine.Resource
	for _, o := range objs {
		o["metadata"].(map[string]any)["namespace"] = ns
		md := o["metadata"].(map[string]any)
		res := &engine.Resource{ID: fmt.Sprintf("%s:%s:%s:%s", o["apiVersion"], o["kind"], ns, md["name"]), Type: engine.Kubernetes, Attributes: o}
		mustApply(t, rt, res)
		desired = append(desired, res)
	}
	for i, l := range rt.ReadLive(context.Background(), desired, runtime.ReadLiveOptions{}) {
		if l.Err != nil || l.Resource == nil || !l.Unchanged {
			t.Errorf("%s: live %v, unchanged %v, err %v; want found unchanged", desired[i].ID, l.Resource != nil, l.Unchanged, l.Err)
		}
	}
}
