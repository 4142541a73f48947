package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/runtime"
)

var _ runtime.LiveReader = (*Runtime)(nil)

// readLiveParallel bounds the list calls of one ReadLive in flight.
const readLiveParallel = 10

// snapshotTTL is how long a list taken for a snapshot serves the snapshot's
// next calls: long enough for one run's preview, short enough that a
// forgotten snapshot's objects do not stay in memory. snapshotIdle drops a
// list sooner once no call has used it for that long: the preview that took
// it is over, and the list of 50,000 objects would otherwise stay in memory
// through the whole apply that follows.
const (
	snapshotTTL  = time.Minute
	snapshotIdle = 10 * time.Second
)

// ReadLive reads desired objects live as Drift does: one (paged) list call per
// kind and namespace, a GET for an object alone in its kind and namespace;
// with a Snapshot, lists shared with the other calls of that snapshot. An
// object found is Unchanged when a server-side apply of desired as kumo would
// change nothing, judged from the object and its managedFields
// (drift.ApplyChangesNothing); when that is not sure it is not Unchanged. One
// that changes is Planned when the change is one the apiserver stores as sent
// (planLocally: new values of a ConfigMap's keys, no admission that may see
// it, kumo allowed to patch it), else left to a dry-run. An
// object of another cluster (the kubeConfig extension), or of a kind the
// cluster does not serve, is an error: read it alone.
func (r *Runtime) ReadLive(ctx context.Context, desired []*engine.Resource, opts runtime.ReadLiveOptions) []runtime.Live {
	out := make([]runtime.Live, len(desired))
	readable := make([]*engine.Resource, len(desired))
	for i, res := range desired {
		if err := runtime.Interrupted(ctx, "read", res.ID); err != nil {
			out[i].Err = err
			continue
		}
		if rt, err := r.forResource(res); err != nil || rt != r {
			out[i].Err = fmt.Errorf("read %s: of another cluster", res.ID)
			continue
		}
		readable[i] = res
	}
	// Asked once, and only when an object changes: the cluster's admission,
	// and, for each namespace, whether kumo may patch there, side by side.
	// With Changing, asked alongside the list of each namespace's ConfigMaps
	// instead of after it.
	configMapsAdmitted := sync.OnceValue(func() bool { return r.admissionMayChange(ctx, opts.Snapshot, "", "configmaps") })
	patchable := r.patchAnswers(ctx, opts.Snapshot)
	// planned holds mayPlan's answer per kind and namespace: the loop below
	// asks it for every object that changes.
	planned := map[listKey]bool{}
	mayPlan := func(t *target) bool {
		k := listKey{t.gvr, t.ns}
		if ok, asked := planned[k]; asked {
			return ok
		}
		allowed := patchable(t)
		var wg sync.WaitGroup
		wg.Go(func() { allowed() })
		admitted := configMapsAdmitted()
		wg.Wait()
		planned[k] = allowed() && !admitted
		return planned[k]
	}
	var ahead sync.WaitGroup
	defer ahead.Wait()
	read := r.readGroup
	if opts.Snapshot != "" {
		read = func(ctx context.Context, k listKey, idx []int, targets []*target, lives []*unstructured.Unstructured, errs []error) {
			byName, err := r.snapshots.list(ctx, opts.Snapshot, k, r.list)
			for _, i := range idx {
				if err != nil {
					errs[i] = classify("list", targets[i].id, err)
				} else if obj := byName[targets[i].name]; obj != nil {
					lives[i] = obj.DeepCopy() // the snapshot's copy is shared
				}
			}
		}
	}
	if opts.Plan && opts.Changing {
		list := read
		read = func(ctx context.Context, k listKey, idx []int, targets []*target, lives []*unstructured.Unstructured, errs []error) {
			if t := targets[idx[0]]; t.gvk == configMapKind {
				ahead.Go(func() { configMapsAdmitted() })
				ahead.Go(func() { patchable(t)() })
			}
			list(ctx, k, idx, targets, lives, errs)
		}
	}
	targets, lives, errs := r.readByList(ctx, readable, readLiveParallel, read)
	for i, t := range targets {
		switch {
		case readable[i] == nil:
		case errs[i] != nil:
			out[i].Err = errs[i]
		case lives[i] != nil:
			body := applyBody(desired[i].Attributes, t.ns)
			out[i].Unchanged = drift.ApplyChangesNothing(body, lives[i].Object, FieldManager)
			if opts.Plan && !out[i].Unchanged {
				if planned, ok := planLocally(t, body, lives[i], mayPlan); ok {
					out[i].Planned = result(desired[i], &unstructured.Unstructured{Object: planned})
				}
			}
			out[i].Resource = result(desired[i], lives[i])
		}
	}
	return out
}

// patchAnswers returns, for a target, whether kumo may patch objects of its
// kind in its namespace (mayPatch), asked once per kind and namespace by
// whichever caller needs it first.
func (r *Runtime) patchAnswers(ctx context.Context, snapshot string) func(*target) func() bool {
	var mu sync.Mutex
	answers := map[listKey]func() bool{}
	return func(t *target) func() bool {
		mu.Lock()
		defer mu.Unlock()
		k := listKey{t.gvr, t.ns}
		if answers[k] == nil {
			answers[k] = sync.OnceValue(func() bool { return r.mayPatch(ctx, snapshot, t) })
		}
		return answers[k]
	}
}

// snapshots keeps the lists taken for each snapshot for snapshotTTL.
type snapshots struct {
	mu    sync.Mutex
	lists map[snapshotKey]*snapshotList
	// sweeping: a sweep is scheduled (it drops what expired, without
	// waiting for the next call).
	sweeping bool
}

type snapshotKey struct {
	snapshot string
	k        listKey
}

type snapshotList struct {
	once   sync.Once
	taken  time.Time
	used   time.Time
	byName map[string]*unstructured.Unstructured
	err    error
}

// list returns the snapshot's list of k, taking it (with list) on first use.
// A failed list is not kept: the next call tries again.
func (s *snapshots) list(ctx context.Context, snapshot string, k listKey, list func(context.Context, listKey) (map[string]*unstructured.Unstructured, error)) (map[string]*unstructured.Unstructured, error) {
	key := snapshotKey{snapshot, k}
	now := time.Now()
	s.mu.Lock()
	if s.lists == nil {
		s.lists = map[snapshotKey]*snapshotList{}
	}
	s.expire(now)
	l, ok := s.lists[key]
	if !ok {
		l = &snapshotList{}
		s.lists[key] = l
	}
	l.used = now
	if !s.sweeping {
		s.sweeping = true
		time.AfterFunc(snapshotIdle, s.sweep)
	}
	s.mu.Unlock()
	l.once.Do(func() {
		l.byName, l.err = list(ctx, k)
		s.mu.Lock()
		l.taken = time.Now()
		if l.err != nil {
			delete(s.lists, key)
		}
		s.mu.Unlock()
	})
	return l.byName, l.err
}

// expire drops the lists past snapshotTTL or idle past snapshotIdle. s.mu is held.
func (s *snapshots) expire(now time.Time) {
	for key, l := range s.lists {
		if !l.taken.IsZero() && (now.Sub(l.taken) > snapshotTTL || now.Sub(l.used) > snapshotIdle) {
			delete(s.lists, key)
		}
	}
}

// sweep expires lists, and comes again while any are left.
func (s *snapshots) sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	if s.sweeping = len(s.lists) > 0; s.sweeping {
		time.AfterFunc(snapshotIdle, s.sweep)
	}
}
