package release

import (
	"context"
	"time"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime"
	"github.com/kumoproj/kumo/runspec"
)

// Node names one resource of a run: the input of every verb (Preview, Apply,
// Delete, Compensate and Wait, one file each).
type Node struct {
	// Key is the run's release; a zero Revision means a preview with no release.
	Key           backend.ReleaseKey
	SpecHash      string
	PriorRevision int
	ID            string
	// Delete: the resource is in the prior state but no longer desired.
	Delete   bool
	Settings runspec.RuntimeSettings
	// Wait and Timeout are the run's wait policy (engine.WaitPolicyOf): when
	// an applied node is done. Empty / zero: healthy, engine.DefaultWaitTimeout.
	Wait    string
	Timeout time.Duration
	// AllowProtectedDelete: an admin allowed deleting resources whose delete
	// policy is protect (the run checked who asked).
	AllowProtectedDelete bool
}

// record stores one resource's outcome: at once (recordNow), or with others
// (Batch).
type record func(ctx context.Context, e backend.StateEntry) error

// recordNow records each outcome in its own write.
func (m *Manager) recordNow(key backend.ReleaseKey) record {
	return func(ctx context.Context, e backend.StateEntry) error { return m.Record(ctx, key, e) }
}

// desired returns the run's spec and the node's resource in it.
func (m *Manager) desired(ctx context.Context, in Node) (*specIndex, *engine.Resource, error) {
	spec, err := m.spec(ctx, in.SpecHash)
	if err != nil {
		return nil, nil, err
	}
	res := spec.resource(in.ID)
	if res == nil {
		return nil, nil, kindf(ErrInvalid, "resource %s is not in spec %s", in.ID, shortHash(in.SpecHash))
	}
	return spec, res, nil
}

// priorResource is the node's resource as the prior state recorded it (nil:
// not there).
func (m *Manager) priorResource(ctx context.Context, in Node) (*engine.Resource, error) {
	p, err := m.prior(ctx, in.Key.Project, in.Key.Workspace, in.PriorRevision)
	return p.resource(in.ID), err
}

// runtime is the runtime of typ under the run's settings in workspace, with
// what only the stored workspace decides taken from it (trustedSettings); one
// the settings cannot give is an invalid spec, which no retry mends.
func (m *Manager) runtime(ctx context.Context, workspace string, typ engine.Type, s runspec.RuntimeSettings) (runtime.Runtime, error) {
	s, err := m.trustedSettings(ctx, workspace, typ, s)
	if err != nil {
		return nil, err
	}
	rt, err := m.runtimes.For(typ, s)
	if err != nil {
		return nil, kindErr(ErrInvalid, err)
	}
	return rt, nil
}

// nodeError keeps transient runtime failures retryable and makes permanent ones
// (the object is invalid) fail the node at once.
func nodeError(err error) error {
	if runtime.IsPermanent(err) {
		return kindErr(ErrResourceFailed, err)
	}
	return err
}
