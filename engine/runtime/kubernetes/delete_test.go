package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/internal/localcluster"
)

// countedRuntime is a Runtime for c whose requests are recorded, from after
// its discovery of the cluster's kinds.
func countedRuntime(t testing.TB, c *localcluster.Cluster, timeout time.Duration) (*Runtime, *requestLog) {
	t.Helper()
	log := &requestLog{}
	rc := rest.CopyConfig(c.RESTConfig())
	rc.Wrap(log.wrap)
	rt, err := NewForConfig(rc, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Delete(context.Background(), namespace("kumo-absent")); err != nil {
		t.Fatal(err)
	}
	log.take()
	return rt, log
}

// A recorded object (it carries its metadata.uid) that nothing holds is
// deleted with one request: no read for the precondition, none to see it gone.
func TestDeleteRecordedObjectIsOneRequest(t *testing.T) {
	c, rt, ns := setup(t)
	counted, log := countedRuntime(t, c, 0)
	var recorded []*engine.Resource
	for i := range 3 {
		recorded = append(recorded, mustApply(t, rt, configMap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"k": "v"})))
	}
	for _, r := range recorded {
		if err := counted.Delete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		name := r.Attributes["metadata"].(map[string]any)["name"].(string)
		want := []string{"DELETE /api/v1/namespaces/" + ns + "/configmaps/" + name}
		if got := log.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("delete of %s made %q, want %q", r.ID, got, want)
		}
		if got, err := rt.Read(context.Background(), r); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("after Delete, Read %s = %v, %v", r.ID, got != nil, err)
		}
	}
}

// A record whose object was deleted and created again under the same name
// since (another UID): the DELETE's precondition fails, and the object now
// of that name is deleted, as one with no record would be.
func TestDeleteRecordOfAReplacedObject(t *testing.T) {
	c, rt, ns := setup(t)
	counted, log := countedRuntime(t, c, 0)
	cm := configMap(ns, "replaced", map[string]any{"k": "v"})
	recorded := mustApply(t, rt, cm)
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig())
	if err := dyn.Resource(configMaps).Namespace(ns).Delete(context.Background(), "replaced", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	replacement := mustApply(t, rt, cm)
	if uidOf(replacement) == uidOf(recorded) {
		t.Fatal("the replacement has the recorded UID")
	}
	log.take()
	if err := counted.Delete(context.Background(), recorded); err != nil {
		t.Fatal(err)
	}
	if got, err := rt.Read(context.Background(), cm); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("after Delete, Read = %v, %v; want the replacement deleted", got != nil, err)
	}
	path := "/api/v1/namespaces/" + ns + "/configmaps/replaced"
	want := []string{"DELETE " + path, "GET " + path, "DELETE " + path}
	if got := log.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests %q, want %q", got, want)
	}
}

func uidOf(r *engine.Resource) types.UID {
	uid, _ := r.Attributes["metadata"].(map[string]any)["uid"].(string)
	return types.UID(uid)
}

// A recorded object with a finalizer is still there when its DELETE
// returns: Delete waits until the finalizer is removed and it is gone.
func TestDeleteWaitsForFinalizer(t *testing.T) {
	c, rt, ns := setup(t)
	held := configMap(ns, "held-recorded", nil)
	held.Attributes["metadata"].(map[string]any)["finalizers"] = []any{"kumo.test/hold"}
	recorded := mustApply(t, rt, held)
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig()).Resource(configMaps).Namespace(ns)

	done := make(chan error, 1)
	go func() { done <- rt.Delete(context.Background(), recorded) }()
	waitFor(t, 30*time.Second, func() bool {
		obj, err := dyn.Get(context.Background(), "held-recorded", metav1.GetOptions{})
		return err == nil && obj.GetDeletionTimestamp() != nil
	})
	select {
	case err := <-done:
		t.Fatalf("Delete returned (%v) while a finalizer holds the object", err)
	default:
	}
	if _, err := dyn.Patch(context.Background(), "held-recorded",
		types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Get(context.Background(), "held-recorded", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after Delete: %v, want not found", err)
	}
}

// BenchmarkDeleteConfigMaps measures deleting recorded ConfigMaps from 10
// goroutines, as 10 batch steps do (go test -bench DeleteConfigMaps
// -benchtime 1000x): the time per delete per goroutine, and requests per delete.
func BenchmarkDeleteConfigMaps(b *testing.B) {
	c, rt, ns := setup(b)
	const slots = 10
	recorded := make([]*engine.Resource, b.N)
	var wg sync.WaitGroup
	for g := range slots {
		wg.Go(func() {
			for i := g; i < b.N; i += slots {
				recorded[i] = mustApply(b, rt, configMap(ns, fmt.Sprintf("cm-%d", i), map[string]any{"i": fmt.Sprint(i)}))
			}
		})
	}
	wg.Wait()
	counted, log := countedRuntime(b, c, 0)
	b.ResetTimer()
	for g := range slots {
		wg.Go(func() {
			for i := g; i < b.N; i += slots {
				if err := counted.Delete(context.Background(), recorded[i]); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000*slots/float64(b.N), "ms/delete/slot")
	b.ReportMetric(float64(len(log.take()))/float64(b.N), "requests/delete")
}

// StartDelete issues deletes to be waited for later: one nothing holds is
// gone when it returns (no wait); those held by a finalizer are all marked
// for deletion before any wait, and each wait returns once its object is gone.
func TestStartDeleteWaitsApart(t *testing.T) {
	c, rt, ns := setup(t)
	dyn := dynamic.NewForConfigOrDie(c.RESTConfig()).Resource(configMaps).Namespace(ns)
	free := mustApply(t, rt, configMap(ns, "free", nil))
	if wait, err := rt.StartDelete(context.Background(), free); err != nil || wait != nil {
		t.Fatalf("StartDelete of an object nothing holds: wait %v, %v; want it gone at once", wait != nil, err)
	}
	var waits []func(context.Context) error
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("held-%d", i)
		held := configMap(ns, name, nil)
		held.Attributes["metadata"].(map[string]any)["finalizers"] = []any{"kumo.test/hold"}
		wait, err := rt.StartDelete(context.Background(), mustApply(t, rt, held))
		if err != nil || wait == nil {
			t.Fatalf("StartDelete of %s held by a finalizer: wait %v, %v; want a wait", name, wait != nil, err)
		}
		waits, names = append(waits, wait), append(names, name)
	}
	for _, name := range names {
		obj, err := dyn.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || obj.GetDeletionTimestamp() == nil {
			t.Fatalf("%s after StartDelete: %v, deletionTimestamp %v; want it being deleted", name, err, obj.GetDeletionTimestamp())
		}
		if _, err := dyn.Patch(context.Background(), name, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, wait := range waits {
		if err := wait(context.Background()); err != nil {
			t.Errorf("wait for %s: %v", names[i], err)
		}
		if _, err := dyn.Get(context.Background(), names[i], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s after its wait: %v, want not found", names[i], err)
		}
	}
}
