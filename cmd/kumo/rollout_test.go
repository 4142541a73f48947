package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/kumoproj/kumo/internal/localcluster"
	"github.com/kumoproj/kumo/runspec"
)

// fleet is an env with a second local cluster and five workspaces on the
// two: dev-eu1, prod-eu1 and prod-us1 on the env's cluster (a), prod-eu2
// and prod-us2 on the second (b). Workspaces on one cluster share the
// stack's objects (its namespace is the project's), as workspaces on one
// cluster do.
type fleet struct {
	*env
	b     *localcluster.Cluster
	kubeB *k8s.Clientset
	stack string
}

var fleetWorkspaces = map[string]string{"dev-eu1": "a", "prod-eu1": "a", "prod-us1": "a", "prod-eu2": "b", "prod-us2": "b"}

func newFleet(t *testing.T) *fleet {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), Workloads: true, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	})
	kubeB, err := k8s.NewForConfig(b.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{env: e, b: b, kubeB: kubeB}
	for ws, cluster := range fleetWorkspaces {
		kc := e.cluster.Kubeconfig
		if cluster == "b" {
			kc = b.Kubeconfig
		}
		e.ok("workspace", "create", ws, "--file", e.writeSpec(ws+".yaml", fmt.Sprintf("runtimes:\n  kubernetes:\n    kubeconfig: %q\n", kc)))
	}
	f.stack = writeStack(t, e.project, "", webApp("nginx:1", ""))
	return f
}

// webApp is the stack's app.yaml: one Deployment of image, asking for cpu
// ("" : none).
func webApp(image, cpu string) string {
	res := ""
	if cpu != "" {
		res = ", resources: {cpu: \"" + cpu + "\"}"
	}
	return "apps:\n  web:\n    workload: {type: service, containers: {web: {image: " + image + res + "}}}\n"
}

func (f *fleet) setApp(app string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.stack, "app.yaml"), []byte(app), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// image is the image of the stack's Deployment on cluster a or b.
func (f *fleet) image(cluster string) string {
	f.t.Helper()
	kube := f.kube
	if cluster == "b" {
		kube = f.kubeB
	}
	d, err := kube.AppsV1().Deployments(f.project).Get(context.Background(), f.project+"-dev-web", metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("deployment on %s: %v", cluster, err)
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

func (f *fleet) status(name string) runspec.RolloutStatus {
	f.t.Helper()
	var st runspec.RolloutStatus
	out := f.ok("rollout", "status", name, "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		f.t.Fatalf("%v\n%s", err, out)
	}
	return st
}

func (f *fleet) latest(ws string) releaseJSON {
	f.t.Helper()
	var rels []releaseJSON
	out := f.ok("release", "list", "--workspace", ws, "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &rels); err != nil || len(rels) == 0 {
		f.t.Fatalf("release list of %s: %v\n%s", ws, err, out)
	}
	return rels[len(rels)-1]
}

// limitCPU gives the stack's namespace on cluster b a LimitRange of one CPU
// per container: a revision asking for more is refused a Pod there, so it
// never becomes available, while the revision before (which asks for none)
// still gets its Pods.
func (f *fleet) limitCPU() {
	f.t.Helper()
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "one-cpu", Namespace: f.project},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
	if _, err := f.kubeB.CoreV1().LimitRanges(f.project).Create(context.Background(), lr, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

const fleetWaves = "canary=dev-eu1; eu=prod-eu*; rest=prod-us*"

// A rollout across 5 workspaces on 2 clusters in 3 waves succeeds in order;
// the next, whose wave eu meets a Deployment that never becomes available
// on cluster b, stops there, and --undo-on-failure puts wave canary and the
// whole of wave eu back at their previous revision; wave rest is untouched.
func TestRolloutAcrossTwoClustersStopsAndUndoes(t *testing.T) {
	f := newFleet(t)
	r := f.ok("rollout", "create", "first", "--stack", f.stack, "--waves", fleetWaves, "--yes", "--timeout", "60s")
	if !strings.Contains(r.stdout, "Rollout first of "+f.project+" (stack dev): succeeded") {
		t.Errorf("create's report:\n%s", r.stdout)
	}
	st := f.status("first")
	want := [][]string{{"dev-eu1"}, {"prod-eu1", "prod-eu2"}, {"prod-us1", "prod-us2"}}
	for i, w := range st.Waves {
		for j, s := range w.Workspaces {
			if s.Workspace != want[i][j] || s.State != runspec.RolloutSucceeded || s.Revision != 1 {
				t.Errorf("wave %s: %+v", w.Name, s)
			}
		}
	}
	if f.image("a") != "nginx:1" || f.image("b") != "nginx:1" {
		t.Fatalf("images %s, %s", f.image("a"), f.image("b"))
	}

	f.limitCPU()
	f.setApp(webApp("nginx:2", "2"))
	r = f.fails([]string{"rollout", "create", "second", "--stack", f.stack, "--waves", fleetWaves, "--yes", "--timeout", "15s", "--undo-on-failure"},
		"wave eu: 1 of 2 workspaces failed (prod-eu2: ")
	st = f.status("second")
	if st.State != runspec.RolloutFailed || st.Waves[1].State != runspec.RolloutFailed || st.Waves[2].State != runspec.RolloutPending {
		t.Errorf("second: %s, waves %s %s %s", st.State, st.Waves[0].State, st.Waves[1].State, st.Waves[2].State)
	}
	for _, ws := range []string{"dev-eu1", "prod-eu1", "prod-eu2"} {
		rel := f.latest(ws)
		if rel.Operation != "rollback" || rel.Phase != "succeeded" || rel.Revision != 3 {
			t.Errorf("%s: latest release %+v, want revision 3, a succeeded rollback", ws, rel)
		}
	}
	for _, ws := range []string{"prod-us1", "prod-us2"} {
		if rel := f.latest(ws); rel.Revision != 1 {
			t.Errorf("%s (wave rest) was touched: %+v", ws, rel)
		}
	}
	if f.image("a") != "nginx:1" || f.image("b") != "nginx:1" {
		t.Errorf("after the undo: images %s, %s", f.image("a"), f.image("b"))
	}
	if !strings.Contains(r.stdout, "rolled-back") {
		t.Errorf("create's report:\n%s", r.stdout)
	}
}

// waitRollout polls `rollout status` until cond holds.
func (f *fleet) waitRollout(name, what string, cond func(runspec.RolloutStatus) bool) runspec.RolloutStatus {
	f.t.Helper()
	var st runspec.RolloutStatus
	waitFor(f.t, what, 3*time.Minute, func() bool {
		r := f.run("rollout", "status", name, "-o", "json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			return false
		}
		if st.State == runspec.RolloutFailed || st.State == runspec.RolloutAborted {
			f.t.Fatalf("waiting for %s, rollout %s ended %s: %s", what, name, st.State, st.Message)
		}
		return cond(st)
	})
	return st
}

// A rollout in kumo server survives a SIGKILL of the server mid-wave and
// goes on after the restart; other processes pause, approve, resume and
// abort rollouts.
func TestRolloutServerKillAndControls(t *testing.T) {
	f := newFleet(t)
	root := filepath.Dir(f.stack)
	srv := f.startServer("--stack-root", root)
	f.ok("rollout", "create", "third", "--detach", "--stack", f.stack, "--waves", fleetWaves, "--yes", "--bake", "5s", "--approve-waves", "rest")
	f.waitRollout("third", "wave eu to be under way", func(st runspec.RolloutStatus) bool {
		return st.Waves[1].State == runspec.RolloutApplying || st.Waves[1].State == runspec.RolloutBaking
	})
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.wait()
	killed := time.Now()
	srv = f.startServer("--stack-root", root)
	st := f.waitRollout("third", "wave rest to await approval after the restart", func(st runspec.RolloutStatus) bool {
		return st.Waves[2].State == runspec.RolloutAwaitingApproval
	})
	t.Logf("wave rest awaited approval %s after the kill", time.Since(killed).Round(time.Millisecond))
	for _, s := range append(st.Waves[0].Workspaces, st.Waves[1].Workspaces...) {
		if s.State != runspec.RolloutSucceeded || s.Revision != 1 {
			t.Errorf("after the restart %s: %+v", s.Workspace, s)
		}
	}

	r := f.ok("rollout", "pause", "third", "--reason", "look first")
	if !strings.Contains(r.stdout, "it is paused") {
		t.Errorf("pause: %s", r)
	}
	f.ok("rollout", "approve", "third")
	time.Sleep(2 * time.Second)
	if st = f.status("third"); st.State != runspec.RolloutPaused || st.Waves[2].Workspaces[0].State != runspec.RolloutPending {
		t.Fatalf("approved while paused, the rollout went on: %s, %+v", st.State, st.Waves[2])
	}
	f.fails([]string{"rollout", "resume", "nosuch"}, "no rollout nosuch")
	f.ok("rollout", "resume", "third")
	f.waitRollout("third", "the rollout to succeed", func(st runspec.RolloutStatus) bool { return st.State == runspec.RolloutSucceeded })
	var actions []string
	for _, a := range f.status("third").Actions {
		actions = append(actions, a.Action)
		if !a.By.Verified || !strings.HasPrefix(a.By.Name, "local:") {
			t.Errorf("%s by %+v: want the verified local owner", a.Action, a.By)
		}
	}
	if strings.Join(actions, ",") != "pause,approve,resume" {
		t.Errorf("actions %v", actions)
	}

	// Abort from another process: nothing after it starts.
	f.setApp(webApp("nginx:3", ""))
	f.ok("rollout", "create", "fourth", "--detach", "--stack", f.stack, "--waves", fleetWaves, "--yes", "--approve-waves", "eu")
	f.waitRollout("fourth", "wave eu to await approval", func(st runspec.RolloutStatus) bool {
		return st.Waves[1].State == runspec.RolloutAwaitingApproval
	})
	f.ok("rollout", "abort", "fourth", "--reason", "wrong image")
	waitFor(t, "the abort", time.Minute, func() bool { return f.status("fourth").State == runspec.RolloutAborted })
	if rel := f.latest("prod-eu1"); rel.Revision != 1 {
		t.Errorf("an aborted rollout applied wave eu: %+v", rel)
	}
	if rel := f.latest("dev-eu1"); rel.Revision != 2 {
		t.Errorf("canary of the aborted rollout: %+v", rel)
	}
	f.fails([]string{"rollout", "resume", "fourth"}, "resume rollout fourth: rollout fourth is aborted: nothing to resume")
}
