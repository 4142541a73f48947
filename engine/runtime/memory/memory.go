package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
)

// ErrTransient is what the failures FailTransiently injects wrap: a passing
// outage, which retrying fixes.
var ErrTransient = errors.New("transient failure (injected)")

// Runtime keeps objects in memory. The zero value is not usable: call New. It is
// safe for concurrent use.
type Runtime struct {
	mu        sync.Mutex
	objects   map[string]*object
	applied   []string
	reject    map[string]bool
	transient map[string]int
	delay     time.Duration
	writes    int64 // counts the writes that changed an object, for versions
	waiting   int   // calls in their delay
}

// object is one stored object. version is the runtime's write count when it was
// last changed (as Kubernetes' resourceVersion), so a test can tell an unchanged
// object from one rewritten, or deleted and created again, with the same content.
type object struct {
	attrs   map[string]any
	version int64
}

var _ runtime.Runtime = (*Runtime)(nil)

// New returns an empty runtime.
func New() *Runtime {
	return &Runtime{objects: map[string]*object{}, reject: map[string]bool{}, transient: map[string]int{}}
}

// Reject makes every later (non-dry-run) apply of id fail permanently, like an
// object the infrastructure refuses.
func (r *Runtime) Reject(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reject[id] = true
}

// FailTransiently makes the next n calls (Apply, Read or Delete) on id fail with
// an error wrapping ErrTransient, not marked permanent, before touching anything.
func (r *Runtime) FailTransiently(id string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transient[id] = n
}

// SetDelay makes every later call wait d before it acts; a context that ends
// meanwhile ends the call, which then changes nothing.
func (r *Runtime) SetDelay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// Applied lists the IDs of the applies (not dry-runs) that succeeded, in order,
// re-applies of unchanged objects included.
func (r *Runtime) Applied() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.applied)
}

// Object returns a copy of the attributes stored for id, and whether there is
// such an object, without going through Read (no faults, no delay).
func (r *Runtime) Object(id string) (map[string]any, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.objects[id]
	if !ok {
		return nil, false
	}
	return clone(o.attrs), true
}

// Version returns a number that changes whenever the object id is written with
// a change (created, updated, deleted and created again), 0 when there is no
// such object.
func (r *Runtime) Version(id string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.objects[id]; ok {
		return o.version
	}
	return 0
}

// IDs lists the stored objects' IDs, sorted.
func (r *Runtime) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.objects))
}

// Apply stores desired's attributes, normalized, under its ID and returns the
// resource as stored. With DryRun it returns the same and stores nothing.
// Applying attributes equal to the stored ones leaves the object (and its
// version) as it is.
func (r *Runtime) Apply(ctx context.Context, desired *engine.Resource, opts runtime.ApplyOptions) (*engine.Resource, error) {
	if err := r.enter(ctx, "apply", desired); err != nil {
		return nil, err
	}
	if desired.Attributes == nil {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: no attributes", desired.ID))
	}
	attrs, ok := engine.Normalize(desired.Attributes).(map[string]any)
	if !ok {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: attributes are not an object", desired.ID))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reject[desired.ID] && !opts.DryRun {
		return nil, runtime.Permanent(fmt.Errorf("apply %s: rejected", desired.ID))
	}
	if !opts.DryRun {
		o, ok := r.objects[desired.ID]
		switch {
		case !ok:
			r.writes++
			r.objects[desired.ID] = &object{attrs: attrs, version: r.writes}
		case !reflect.DeepEqual(o.attrs, attrs):
			r.writes++
			o.attrs, o.version = attrs, r.writes
		}
		r.applied = append(r.applied, desired.ID)
	}
	return with(desired, clone(attrs)), nil
}

// Read returns the stored object, or an error wrapping runtime.ErrNotFound.
func (r *Runtime) Read(ctx context.Context, res *engine.Resource) (*engine.Resource, error) {
	if err := r.enter(ctx, "read", res); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.objects[res.ID]
	if !ok {
		return nil, runtime.NotFound(res.ID)
	}
	return with(res, clone(o.attrs)), nil
}

// Delete removes the stored object; an absent one is already gone.
func (r *Runtime) Delete(ctx context.Context, res *engine.Resource) error {
	if err := r.enter(ctx, "delete", res); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.objects, res.ID)
	return nil
}

// enter runs what every call does first: check the resource names something,
// wait the configured delay (or until ctx ends) and consume an injected
// transient failure.
func (r *Runtime) enter(ctx context.Context, op string, res *engine.Resource) error {
	if err := runtime.Interrupted(ctx, op, res.ID); err != nil {
		return err
	}
	if res.ID == "" {
		return runtime.Permanent(fmt.Errorf("%s: resource has no ID", op))
	}
	r.mu.Lock()
	delay := r.delay
	r.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		r.setWaiting(+1)
		defer r.setWaiting(-1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w", op, res.ID, ctx.Err())
		case <-t.C:
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.transient[res.ID] > 0 {
		r.transient[res.ID]--
		return fmt.Errorf("%s %s: %w", op, res.ID, ErrTransient)
	}
	return nil
}

func (r *Runtime) setWaiting(d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting += d
}

// Waiting returns how many calls are in their delay (see SetDelay) now.
func (r *Runtime) Waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

// with is res with other attributes.
func with(res *engine.Resource, attrs map[string]any) *engine.Resource {
	out := *res
	out.Attributes = attrs
	return &out
}

// clone deep-copies normalized attributes, so no caller shares the stored maps.
func clone(attrs map[string]any) map[string]any {
	out, _ := engine.Normalize(attrs).(map[string]any)
	return out
}
