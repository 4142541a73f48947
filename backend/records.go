package backend

import (
	"context"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// Checking what is about to be written, and that what was read is what was asked
// for: where names the file or object read.

// checkRelease checks a release about to be stored by op ("create",
// "update") and returns its key.
func checkRelease(op string, r *engine.Release) (ReleaseKey, error) {
	if r == nil {
		return ReleaseKey{}, fmt.Errorf("%s release: release is nil", op)
	}
	key := KeyOf(r)
	if err := key.Validate(); err != nil {
		return key, fmt.Errorf("%s release: %w", op, err)
	}
	return key, nil
}

// decodeReleaseFile decodes the release file stored for key (read from
// where): of format 2 (compressed, store_chunks.go) with its spec and state
// read from where it names them, or of format 1 (plain YAML or JSON, the
// spec and state inline). It refuses one that names another release, and
// leaves Version to the caller.
func (s *Store) decodeReleaseFile(ctx context.Context, key ReleaseKey, where string, data []byte) (*engine.Release, error) {
	if isCompressed(data) {
		text, err := decompress(data)
		if err != nil {
			return nil, fmt.Errorf("release %s: %s: %w", key, where, err)
		}
		return s.decodeRecord(ctx, key, where, text)
	}
	var r engine.Release
	if err := decodeYAML(data, &r); err != nil {
		return nil, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if err := checkReleaseKey(key, where, KeyOf(&r)); err != nil {
		return nil, err
	}
	if err := s.openRelease(&r, where); err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	return &r, nil
}

// decodeReleaseHead decodes the head of the release stored for key (read
// from where): its resources are counted, not decoded.
func decodeReleaseHead(key ReleaseKey, where string, data []byte) (ReleaseHead, error) {
	var r struct {
		ReleaseHead
		Project   string `json:"project"`
		Workspace string `json:"workspace"`
		State     *struct {
			Resources []struct{} `json:"resources"`
		} `json:"state"`
	}
	if isCompressed(data) {
		text, err := decompress(data)
		if err != nil {
			return ReleaseHead{}, fmt.Errorf("release %s: %s: %w", key, where, err)
		}
		var rec releaseRecord
		if err := decodeJSON(text, &rec); err != nil {
			return ReleaseHead{}, fmt.Errorf("release %s: decode %s: %w", key, where, err)
		}
		if err := checkRecord(key, where, &rec); err != nil {
			return ReleaseHead{}, err
		}
		return headOf(&rec.Release, rec.Parts.StateResources), nil
	}
	if err := decodeYAML(data, &r); err != nil {
		return ReleaseHead{}, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if err := checkReleaseKey(key, where, ReleaseKey{Project: r.Project, Workspace: r.Workspace, Revision: r.Revision}); err != nil {
		return ReleaseHead{}, err
	}
	if r.State != nil {
		r.ReleaseHead.Resources = len(r.State.Resources)
	}
	return r.ReleaseHead, nil
}

// checkReleaseKey checks that the release read from where for key says it is
// that release (holds).
func checkReleaseKey(key ReleaseKey, where string, holds ReleaseKey) error {
	if holds != key {
		return fmt.Errorf("release %s: %s holds %s instead", key, where, holds)
	}
	return nil
}

// encodeWorkspace checks a workspace about to be stored by op ("create", "put")
// and encodes it.
func encodeWorkspace(op string, ws *engine.Workspace) ([]byte, error) {
	if ws == nil {
		return nil, fmt.Errorf("%s workspace: workspace is nil", op)
	}
	if err := ValidateName("workspace", ws.Name); err != nil {
		return nil, fmt.Errorf("%s workspace: %w", op, err)
	}
	data, err := encodeYAML(ws)
	if err != nil {
		return nil, fmt.Errorf("%s workspace %s: encode: %w", op, ws.Name, err)
	}
	return data, nil
}

// decodeWorkspace decodes the workspace stored as name, and refuses one that
// names another workspace.
func decodeWorkspace(name, where string, data []byte) (*engine.Workspace, error) {
	var ws engine.Workspace
	if err := decodeYAML(data, &ws); err != nil {
		return nil, fmt.Errorf("workspace %s: decode %s: %w", name, where, err)
	}
	if ws.Name != name {
		return nil, fmt.Errorf("workspace %s: %s holds workspace %q instead", name, where, ws.Name)
	}
	return &ws, nil
}

// checkSpecHash refuses what cannot be a spec's hash, as not found: it never
// becomes a path or a key.
func checkSpecHash(hash string) error {
	if !validHash(hash) {
		return fmt.Errorf("spec %q: %w (not a hex sha256)", hash, ErrNotFound)
	}
	return nil
}

// decodeSpec decodes the spec stored under hash.
func decodeSpec(hash, where string, data []byte) (*engine.Spec, error) {
	var spec engine.Spec
	if err := decodeStored(data, &spec); err != nil {
		return nil, fmt.Errorf("spec %s: decode %s: %w", hash, where, err)
	}
	return &spec, nil
}

// checkRunLogPart checks the names of a run log part about to be stored.
func checkRunLogPart(runID, part string) error {
	if err := ValidateName("run", runID); err != nil {
		return fmt.Errorf("put run log: %w", err)
	}
	if err := ValidateName("log part", part); err != nil {
		return fmt.Errorf("put run log of %s: %w", runID, err)
	}
	return nil
}

// decodeEntry decodes a state entry.
func decodeEntry(where string, data []byte) (StateEntry, error) {
	var e StateEntry
	if err := decodeStored(data, &e); err != nil {
		return e, fmt.Errorf("decode %s: %w", where, err)
	}
	return e, nil
}

// headOf is the head of r, whose state records n resources.
func headOf(r *engine.Release, n int) ReleaseHead {
	return ReleaseHead{Revision: r.Revision, Phase: r.Phase, Operation: r.Operation, Stack: r.Stack, SpecHash: r.SpecHash, RunID: r.RunID, Resources: n}
}
