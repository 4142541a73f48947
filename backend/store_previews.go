package backend

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kumoproj/kumo/engine"
)

// RecordedPreview is a running release's previews as its run took them,
// kept before the run changes anything live: a run whose workflow task is
// lost after that goes on from them, not from previews taken again over
// what it had changed meanwhile. Changes are the run's plan in node order,
// values masked and cut as the run shows them; Stale are the nodes whose
// record the run refreshes once approved.
type RecordedPreview struct {
	Changes []engine.Change `json:"changes"`
	Stale   []int           `json:"stale,omitempty"`
}

// previewRecord is what PutPreview stores: the preview in clear, or, with a
// sealer, sealed whole (a Terraform resource's change may hold attributes its
// provider marks sensitive, which the store keeps sealed everywhere).
type previewRecord struct {
	Preview *RecordedPreview `json:"preview,omitempty"`
	Sealed  string           `json:"sealed,omitempty"`
}

// previewKey is in the release's state directory: cleared with its entries
// (ClearStateEntries), and no entry or batch name.
func previewKey(key ReleaseKey) string { return stateDir(key) + "/preview" + jsonExt }

// previewWhat names a release's previews among the texts SealText seals: the
// revision binds them to it.
func previewWhat(key ReleaseKey) string { return "previews of revision " + strconv.Itoa(key.Revision) }

// PutPreview implements Backend.
func (s *Store) PutPreview(ctx context.Context, key ReleaseKey, p RecordedPreview) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := key.Validate(); err != nil {
		return fmt.Errorf("put preview: %w", err)
	}
	ok, err := s.releaseExists(ctx, key)
	if err != nil {
		return fmt.Errorf("put preview of %s: %w", key, err)
	}
	if !ok {
		return fmt.Errorf("put preview of %s: release %w", key, ErrNotFound)
	}
	rec := previewRecord{Preview: &p}
	if s.sealer != nil {
		text, err := encodeJSON(p)
		if err != nil {
			return fmt.Errorf("put preview of %s: encode: %w", key, err)
		}
		if rec.Sealed, err = s.SealText(key.Project, key.Workspace, previewWhat(key), string(text)); err != nil {
			return fmt.Errorf("put preview of %s: seal: %w", key, err)
		}
		rec.Preview = nil
	}
	data, err := encodeCompressed(rec)
	if err != nil {
		return fmt.Errorf("put preview of %s: encode: %w", key, err)
	}
	if _, err := s.write(ctx, previewKey(key), data, Condition{}); err != nil {
		return fmt.Errorf("put preview of %s: %w", key, err)
	}
	return nil
}

// GetPreview implements Backend.
func (s *Store) GetPreview(ctx context.Context, key ReleaseKey) (RecordedPreview, bool, error) {
	if err := ctx.Err(); err != nil {
		return RecordedPreview{}, false, err
	}
	if err := key.Validate(); err != nil {
		return RecordedPreview{}, false, fmt.Errorf("get preview: %w", err)
	}
	objKey := previewKey(key)
	data, _, err := s.d.Read(ctx, objKey)
	if errors.Is(err, ErrNotFound) {
		return RecordedPreview{}, false, nil
	}
	if err != nil {
		return RecordedPreview{}, false, fmt.Errorf("get preview of %s: %w", key, err)
	}
	var rec previewRecord
	if err := decodeStored(data, &rec); err != nil {
		return RecordedPreview{}, false, fmt.Errorf("get preview of %s: decode %s: %w", key, s.d.Where(objKey), err)
	}
	switch {
	case rec.Sealed != "":
		text, err := s.OpenText(key.Project, key.Workspace, previewWhat(key), rec.Sealed)
		if err != nil {
			return RecordedPreview{}, false, fmt.Errorf("get preview of %s: %s: %w", key, s.d.Where(objKey), err)
		}
		var p RecordedPreview
		if err := decodeJSON([]byte(text), &p); err != nil {
			return RecordedPreview{}, false, fmt.Errorf("get preview of %s: decode %s: %w", key, s.d.Where(objKey), err)
		}
		return p, true, nil
	case rec.Preview != nil:
		return *rec.Preview, true, nil
	default:
		return RecordedPreview{}, false, fmt.Errorf("get preview of %s: %s holds no preview", key, s.d.Where(objKey))
	}
}
