package backend

import (
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// Checking what is about to be written, and that what was read is what was asked
// for: where names the file or object read.

// encodeRelease checks a release about to be stored by op ("create", "update")
// and encodes it.
func encodeRelease(op string, r *engine.Release) (ReleaseKey, []byte, error) {
	if r == nil {
		return ReleaseKey{}, nil, fmt.Errorf("%s release: release is nil", op)
	}
	key := KeyOf(r)
	if err := key.Validate(); err != nil {
		return key, nil, fmt.Errorf("%s release: %w", op, err)
	}
	data, err := encodeYAML(r)
	if err != nil {
		return key, nil, fmt.Errorf("%s release %s: encode: %w", op, key, err)
	}
	return key, data, nil
}

// decodeRelease decodes the release stored for key, and refuses one that names
// another release. It leaves Version to the caller.
func decodeRelease(key ReleaseKey, where string, data []byte) (*engine.Release, error) {
	var r engine.Release
	if err := decodeYAML(data, &r); err != nil {
		return nil, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if err := checkReleaseKey(key, where, KeyOf(&r)); err != nil {
		return nil, err
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
	if err := decodeYAML(data, &spec); err != nil {
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
	if err := decodeJSON(data, &e); err != nil {
		return e, fmt.Errorf("decode %s: %w", where, err)
	}
	return e, nil
}
