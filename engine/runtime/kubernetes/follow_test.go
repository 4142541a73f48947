package kubernetes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

func fakeConfigMap(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv},
	}}
}

// follow lists once, then watches; a watch that closes is resumed without a
// new list, and one whose resourceVersion expired (410) starts over with a list.
func TestFollowResumesAndRelists(t *testing.T) {
	client := fake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"}, fakeConfigMap("a", "1"))
	var lists atomic.Int32
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, k8sruntime.Object, error) {
		lists.Add(1)
		return false, nil, nil
	})
	watchers := make(chan *watch.FakeWatcher, 4)
	resumedFrom := make(chan string, 4)
	client.PrependWatchReactor("configmaps", func(a clienttesting.Action) (bool, watch.Interface, error) {
		resumedFrom <- a.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion
		w := watch.NewFake()
		watchers <- w
		return true, w, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make(chan map[string]*unstructured.Unstructured)
	errc := make(chan error, 1)
	go follow(ctx, client.Resource(configMaps).Namespace("ns"), metav1.ListOptions{}, out, errc)

	// next is follow's next snapshot; nothing within 10s fails the test.
	next := func(what string) map[string]*unstructured.Unstructured {
		t.Helper()
		select {
		case snap := <-out:
			return snap
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no snapshot (%d lists so far)", what, lists.Load())
			return nil
		}
	}
	if snap := next("first list"); len(snap) != 1 || snap["a"] == nil {
		t.Fatalf("first snapshot %v", snap)
	}
	w := <-watchers
	<-resumedFrom
	w.Add(fakeConfigMap("b", "7"))
	if snap := next("Added"); len(snap) != 2 {
		t.Fatalf("after Added: %v", snap)
	}
	w.Action(watch.Bookmark, fakeConfigMap("", "9"))
	w.Stop() // the server ends the watch: resume from the last version seen
	w = <-watchers
	if rv := <-resumedFrom; rv != "9" || lists.Load() != 1 {
		t.Fatalf("resumed from %q after %d lists, want 9 after 1", rv, lists.Load())
	}
	w.Delete(fakeConfigMap("b", "10"))
	if snap := next("Deleted"); len(snap) != 1 {
		t.Fatalf("after Deleted: %v", snap)
	}
	w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	if snap := next("410"); len(snap) != 1 || lists.Load() != 2 {
		t.Fatalf("after 410: snapshot %v after %d lists, want a new list", snap, lists.Load())
	}
	<-watchers
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
}
