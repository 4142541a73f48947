package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/health"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/internal/localcluster"
)

// progress records what WaitHealthy reports, and passes it on to ch if set.
type progress struct {
	mu   sync.Mutex
	seen []health.Result
	ch   chan health.Result
}

func (p *progress) add(h health.Result) {
	p.mu.Lock()
	p.seen = append(p.seen, h)
	p.mu.Unlock()
	if p.ch != nil {
		p.ch <- h
	}
}

func (p *progress) all() []health.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]health.Result(nil), p.seen...)
}

// unschedulable makes d's pods wait for a node that does not exist: the
// Deployment stays Progressing.
func unschedulable(d *engine.Resource) *engine.Resource {
	spec := d.Attributes["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["nodeSelector"] = map[string]any{"kumo.test/no-such-node": "true"}
	return d
}

func dynamicClient(t *testing.T, c *localcluster.Cluster) dynamic.Interface {
	t.Helper()
	client, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func healthError(t *testing.T, err error) *runtime.HealthError {
	t.Helper()
	var herr *runtime.HealthError
	if !errors.As(err, &herr) {
		t.Fatalf("error %v (%T), want a *runtime.HealthError", err, err)
	}
	if !runtime.IsPermanent(err) {
		t.Errorf("%v is not marked permanent", err)
	}
	return herr
}

func TestWaitHealthyDeploymentBecomesAvailable(t *testing.T) {
	_, rt, ns := setup(t)
	d := mustApply(t, rt, deployment(ns, "web", 2))
	var p progress
	var settled *engine.Resource
	h, err := rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Timeout: 2 * time.Minute, Progress: p.add,
		Settled: func(live *engine.Resource) { settled = live }})
	if err != nil {
		t.Fatal(err)
	}
	if want := (health.Result{Status: health.Healthy, Message: "2/2 replicas available"}); h != want {
		t.Errorf("health %+v, want %+v", h, want)
	}
	// What the wait saw healthy is the object as Read returns it.
	read, err := rt.Read(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if settled == nil || !reflect.DeepEqual(engine.Normalize(settled.Attributes), engine.Normalize(read.Attributes)) || settled.ID != d.ID {
		t.Errorf("settled on %v, want the object as read once healthy: %v", settled, read)
	}
	seen := p.all()
	t.Logf("progress: %v", seen)
	if len(seen) < 2 || seen[0].Status != health.Progressing || seen[len(seen)-1] != h {
		t.Errorf("progress %v: want Progressing first, the final health last", seen)
	}
	// Already healthy: one look, no waiting.
	p = progress{}
	if h2, err := rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Timeout: time.Minute, Progress: p.add}); err != nil || h2 != h {
		t.Errorf("second wait: %v, %v", h2, err)
	}
	if seen := p.all(); len(seen) != 1 {
		t.Errorf("second wait reported %v, want the healthy state once", seen)
	}
}

// A Deployment whose progress deadline passes is Degraded: the wait fails at
// once instead of waiting out its timeout. The deployment controller itself
// sets ProgressDeadlineExceeded (the deadline here is one second).
func TestWaitFailsFastOnProgressDeadline(t *testing.T) {
	_, rt, ns := setup(t)
	d := unschedulable(deployment(ns, "late", 2))
	d.Attributes["spec"].(map[string]any)["progressDeadlineSeconds"] = int64(1)
	d = mustApply(t, rt, d)
	begin := time.Now()
	_, err := rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Timeout: 2 * time.Minute})
	herr := healthError(t, err)
	t.Logf("failed after %v: %v", time.Since(begin).Round(time.Millisecond), err)
	if herr.TimedOut || herr.Health.Status != health.Degraded || herr.Health.Reason != "ProgressDeadlineExceeded" {
		t.Fatalf("error %+v", herr)
	}
	prefix := d.ID + `: Degraded: progress deadline exceeded: ReplicaSet "late-`
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, `" has timed out progressing.`) {
		t.Errorf("error %q, want %q...has timed out progressing.", msg, prefix)
	}
}

// A Deployment that never becomes available times out with the resource ID,
// its last health and message. A resumed wait (Since in the past) keeps the
// original timeout.
func TestWaitTimesOutWithLastHealth(t *testing.T) {
	_, rt, ns := setup(t)
	d := mustApply(t, rt, unschedulable(deployment(ns, "stuck", 2)))
	_, err := rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Timeout: 5 * time.Second})
	herr := healthError(t, err)
	if want := d.ID + ": Progressing for 5s: 0/2 replicas available"; err.Error() != want || !herr.TimedOut {
		t.Errorf("error %q (timed out %v), want %q", err, herr.TimedOut, want)
	}

	begin := time.Now()
	_, err = rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Since: begin.Add(-time.Hour), Timeout: time.Hour + 2*time.Second})
	healthError(t, err)
	if want := d.ID + ": Progressing for 1h0m2s: 0/2 replicas available"; err.Error() != want {
		t.Errorf("resumed wait: error %q, want %q", err, want)
	}

	// The context's deadline bounds the wait too, and is reported the same way.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = rt.WaitHealthy(ctx, d, runtime.WaitOptions{Since: begin, Timeout: time.Hour})
	if herr := healthError(t, err); !herr.TimedOut || herr.Health.Message != "0/2 replicas available" {
		t.Errorf("context deadline: %+v", herr)
	}

	// Cancelling is not a timeout.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	_, err = rt.WaitHealthy(ctx, d, runtime.WaitOptions{Timeout: time.Hour})
	if !errors.Is(err, context.Canceled) || runtime.IsPermanent(err) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// setPodStatus writes a crash-looping container status into a pod's status
// subresource (what a kubelet would report), retrying on conflicts with the
// scheduler's own status writes.
func setPodStatus(t *testing.T, client dynamic.Interface, ns, name string, restarts int64) {
	t.Helper()
	pods := client.Resource(podsResource).Namespace(ns)
	for {
		pod, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := map[string]any{
			"phase": "Running",
			"containerStatuses": []any{map[string]any{
				"name": "web", "image": "nginx:1.27", "imageID": "", "ready": false, "restartCount": restarts,
				"state": map[string]any{"waiting": map[string]any{
					"reason":  "CrashLoopBackOff",
					"message": fmt.Sprintf("back-off %ds restarting failed container=web pod=%s_%s", 10*restarts, name, ns),
				}},
				"lastState": map[string]any{"terminated": map[string]any{"exitCode": int64(1), "reason": "Error"}},
			}},
		}
		if conds, ok := pod.Object["status"].(map[string]any)["conditions"]; ok {
			status["conditions"] = conds
		}
		pod.Object["status"] = status
		_, err = pods.UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
}

// A crash-looping Pod is tolerated up to CrashLoopRestarts restarts, then the
// wait fails fast. The Pod is bound to a node nothing simulates, so only this
// test writes its status.
func TestWaitCrashLoopGrace(t *testing.T) {
	c, rt, ns := setup(t)
	client := dynamicClient(t, c)
	pod := mustApply(t, rt, &engine.Resource{
		ID:   "v1:Pod:" + ns + ":crashy",
		Type: engine.Kubernetes,
		Attributes: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "crashy", "namespace": ns},
			"spec": map[string]any{
				"nodeName":   "kumo-test-unsimulated-node",
				"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}},
			},
		},
	})
	setPodStatus(t, client, ns, "crashy", 1)

	p := progress{ch: make(chan health.Result, 16)}
	type outcome struct {
		h   health.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		h, err := rt.WaitHealthy(context.Background(), pod, runtime.WaitOptions{Timeout: 2 * time.Minute, CrashLoopRestarts: 2, Progress: p.add})
		done <- outcome{h, err}
	}()
	// Up to the grace (2 restarts), the wait goes on.
	for restarts := int64(1); restarts <= 2; restarts++ {
		if restarts > 1 {
			setPodStatus(t, client, ns, "crashy", restarts)
		}
		want := fmt.Sprintf("(%d of 2 restarts tolerated)", restarts)
		for h := range p.ch {
			if h.Status != health.Progressing {
				t.Fatalf("within grace: %+v", h)
			}
			if strings.HasSuffix(h.Message, want) {
				break
			}
		}
	}
	setPodStatus(t, client, ns, "crashy", 3)
	o := <-done
	herr := healthError(t, o.err)
	want := fmt.Sprintf("%s: Degraded: back-off 30s restarting failed container=web pod=crashy_%s", pod.ID, ns)
	if herr.TimedOut || herr.Health.Reason != "CrashLoopBackOff" || o.err.Error() != want {
		t.Errorf("error %q (%+v), want %q", o.err, herr, want)
	}
}

// A Deployment's own status does not show a crash loop; its Pods' does: the
// wait follows them and fails once one crash-loops past the grace.
func TestWaitDeploymentFailsOnCrashLoopingPod(t *testing.T) {
	c, rt, ns := setup(t)
	client := dynamicClient(t, c)
	d := mustApply(t, rt, unschedulable(deployment(ns, "crashing", 1)))
	p := progress{ch: make(chan health.Result, 16)}
	done := make(chan error, 1)
	go func() {
		_, err := rt.WaitHealthy(context.Background(), d, runtime.WaitOptions{Timeout: 2 * time.Minute, Progress: p.add})
		done <- err
	}()
	// Once the ReplicaSet has made its Pod, make it crash-loop past the grace.
	var pod string
	for pod == "" {
		select {
		case <-p.ch:
		case <-time.After(100 * time.Millisecond):
		}
		list, err := client.Resource(podsResource).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=crashing"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			pod = list.Items[0].GetName()
		}
	}
	setPodStatus(t, client, ns, pod, runtime.DefaultCrashLoopRestarts+1)
	err := <-done
	herr := healthError(t, err)
	want := fmt.Sprintf("%s: Degraded: pod %s: back-off 40s restarting failed container=web pod=%s_%s", d.ID, pod, pod, ns)
	if herr.TimedOut || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// An object that does not exist yet is Missing; the watch sees it created.
func TestWaitSeesTheObjectCreated(t *testing.T) {
	_, rt, ns := setup(t)
	cm := configMap(ns, "later", map[string]any{"k": "v"})
	p := progress{ch: make(chan health.Result, 4)}
	done := make(chan error, 1)
	go func() {
		_, err := rt.WaitHealthy(context.Background(), cm, runtime.WaitOptions{Timeout: time.Minute, Progress: p.add})
		done <- err
	}()
	if h := <-p.ch; h.Status != health.Missing {
		t.Fatalf("first health %+v, want Missing", h)
	}
	mustApply(t, rt, cm)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if seen := p.all(); len(seen) != 2 || seen[1].Status != health.Healthy {
		t.Errorf("progress %v", seen)
	}
}

func TestWaitUnknownKindIsPermanent(t *testing.T) {
	_, rt, ns := setup(t)
	_, err := rt.WaitHealthy(context.Background(), &engine.Resource{
		ID: "example.com/v1:Nothing:" + ns + ":x", Type: engine.Kubernetes,
		Attributes: map[string]any{"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": map[string]any{"name": "x", "namespace": ns}},
	}, runtime.WaitOptions{Timeout: time.Minute})
	if err == nil || !runtime.IsPermanent(err) {
		t.Errorf("error %v, want a permanent one", err)
	}
}
