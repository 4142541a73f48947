package release

import (
	"context"

	"github.com/kumoproj/kumo/backend"
)

// RecordPreview keeps the previews a run took in the workflow task that goes
// on to change things, before it changes anything: were that task lost (its
// worker killed), the next worker would take them again over what the run
// had changed meanwhile. Begin tells the run's next attempt that they are
// kept (Info.PreviewRecorded), and it reads them back (RecordedPreview)
// instead. Kept again unchanged by a retry; cleared with the state entries
// when the release is finished.
func (m *Manager) RecordPreview(ctx context.Context, key backend.ReleaseKey, p backend.RecordedPreview) error {
	return m.backend.PutPreview(ctx, key, p)
}

// RecordedPreview returns the previews RecordPreview kept for the release:
// an error when there are none (Begin said there were).
func (m *Manager) RecordedPreview(ctx context.Context, key backend.ReleaseKey) (backend.RecordedPreview, error) {
	p, ok, err := m.backend.GetPreview(ctx, key)
	if err != nil {
		return backend.RecordedPreview{}, err
	}
	if !ok {
		return backend.RecordedPreview{}, kindf(ErrBackend, "revision %d of %s/%s: no previews kept", key.Revision, key.Project, key.Workspace)
	}
	return p, nil
}
