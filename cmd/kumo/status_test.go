package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type statusJSON struct {
	Revision  int          `json:"revision"`
	Health    healthJSON   `json:"health"`
	Resources []statusNode `json:"resources"`
}

type healthJSON struct {
	Status, Message, Reason string
}

type statusNode struct {
	ID       string       `json:"id"`
	Health   healthJSON   `json:"health"`
	Children []statusNode `json:"children"`
}

func (e *env) status(args ...string) (statusJSON, result) {
	e.t.Helper()
	r := e.run(append([]string{"status", "-o", "json"}, args...)...)
	var st statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		e.t.Fatalf("kumo status: %v: %s", err, r)
	}
	return st, r
}

// Test 5: `kumo status --tree -o json` shows a Deployment with its ReplicaSet
// and two Pods, each with its health; once one Pod crash-loops the stack is
// Degraded and the exit code 1.
func TestStatusTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("spec.yaml", "resources:\n"+namespace(e.ns)+deployment(e.ns, "web", 2, "", ""))
	e.ok("apply", "--yes", "-f", spec)

	st, r := e.status("--tree")
	if r.code != 0 || st.Health.Status != "Healthy" || st.Revision != 1 {
		t.Fatalf("status of an available Deployment: %s", r)
	}
	dep := "apps/v1:Deployment:" + e.ns + ":web"
	var web *statusNode
	for i := range st.Resources {
		if st.Resources[i].ID == dep {
			web = &st.Resources[i]
		}
	}
	if len(st.Resources) != 2 || web == nil || web.Health.Status != "Healthy" {
		t.Fatalf("resources: %+v", st.Resources)
	}
	if len(web.Children) != 1 || !strings.HasPrefix(web.Children[0].ID, "apps/v1:ReplicaSet:"+e.ns+":web-") {
		t.Fatalf("the Deployment's children: %+v", web.Children)
	}
	pods := web.Children[0].Children
	if len(pods) != 2 {
		t.Fatalf("the ReplicaSet's children: %+v", pods)
	}
	for _, p := range pods {
		if !strings.HasPrefix(p.ID, "v1:Pod:"+e.ns+":web-") || p.Health.Status != "Healthy" {
			t.Errorf("pod %+v", p)
		}
	}

	// One Pod's container now crash-loops.
	ctx := context.Background()
	name := pods[0].ID[strings.LastIndex(pods[0].ID, ":")+1:]
	pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		cs.Ready, cs.RestartCount = false, 5
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container"}}
	}
	if _, err := e.kube.CoreV1().Pods(e.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st, r = e.status("--tree")
	if r.code != 1 || st.Health.Status != "Degraded" || st.Health.Reason != "CrashLoopBackOff" {
		t.Fatalf("status with a crash-looping Pod: want Degraded and exit 1: %s", r)
	}
	crashed := 0
	for _, res := range st.Resources {
		for _, rs := range res.Children {
			for _, p := range rs.Children {
				if p.Health.Status == "Degraded" {
					crashed++
					if p.ID != pods[0].ID {
						t.Errorf("pod %s is Degraded, want %s", p.ID, pods[0].ID)
					}
				}
			}
		}
	}
	if crashed != 1 {
		t.Errorf("%d Degraded pods in the tree, want 1: %s", crashed, r.stdout)
	}
	// The table shows the same tree, the Pod indented under its ReplicaSet.
	if r := e.run("status", "--tree"); r.code != 1 || !strings.Contains(r.stdout, "Degraded         "+pods[0].ID) ||
		!strings.Contains(r.stdout, "revision 1: Degraded") {
		t.Errorf("kumo status --tree: %s", r)
	}
}
