package codec

import (
	"fmt"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
)

// The helpers below are the parts of the Backend contract that do not depend on
// where bytes are kept: checking what is about to be written, and checking that
// what was read is what was asked for. Every backend uses them, so they refuse
// the same input with the same messages. where names the file or object read.

// EncodeRelease checks a release about to be stored by op ("create", "update")
// and encodes it.
func EncodeRelease(op string, r *engine.Release) (backend.ReleaseKey, []byte, error) {
	if r == nil {
		return backend.ReleaseKey{}, nil, fmt.Errorf("%s release: release is nil", op)
	}
	key := backend.KeyOf(r)
	if err := key.Validate(); err != nil {
		return key, nil, fmt.Errorf("%s release: %w", op, err)
	}
	data, err := EncodeYAML(r)
	if err != nil {
		return key, nil, fmt.Errorf("%s release %s: encode: %w", op, key, err)
	}
	return key, data, nil
}

// DecodeRelease decodes the release stored for key, and refuses one that names
// another release. It leaves Version to the caller.
func DecodeRelease(key backend.ReleaseKey, where string, data []byte) (*engine.Release, error) {
	var r engine.Release
	if err := DecodeYAML(data, &r); err != nil {
		return nil, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if r.Project != key.Project || r.Workspace != key.Workspace || r.Revision != key.Revision {
		return nil, fmt.Errorf("release %s: %s holds %s instead", key, where, backend.KeyOf(&r))
	}
	return &r, nil
}

// EncodeWorkspace checks a workspace about to be stored by op ("create", "put")
// and encodes it.
func EncodeWorkspace(op string, ws *engine.Workspace) ([]byte, error) {
	if ws == nil {
		return nil, fmt.Errorf("%s workspace: workspace is nil", op)
	}
	if err := backend.ValidateName("workspace", ws.Name); err != nil {
		return nil, fmt.Errorf("%s workspace: %w", op, err)
	}
	data, err := EncodeYAML(ws)
	if err != nil {
		return nil, fmt.Errorf("%s workspace %s: encode: %w", op, ws.Name, err)
	}
	return data, nil
}

// DecodeWorkspace decodes the workspace stored as name, and refuses one that
// names another workspace.
func DecodeWorkspace(name, where string, data []byte) (*engine.Workspace, error) {
	var ws engine.Workspace
	if err := DecodeYAML(data, &ws); err != nil {
		return nil, fmt.Errorf("workspace %s: decode %s: %w", name, where, err)
	}
	if ws.Name != name {
		return nil, fmt.Errorf("workspace %s: %s holds workspace %q instead", name, where, ws.Name)
	}
	return &ws, nil
}

// CheckSpecHash refuses what cannot be a spec's hash, as not found: it never
// becomes a path or a key.
func CheckSpecHash(hash string) error {
	if !ValidHash(hash) {
		return fmt.Errorf("spec %q: %w (not a hex sha256)", hash, backend.ErrNotFound)
	}
	return nil
}

// DecodeSpec decodes the spec stored under hash.
func DecodeSpec(hash, where string, data []byte) (*engine.Spec, error) {
	var spec engine.Spec
	if err := DecodeYAML(data, &spec); err != nil {
		return nil, fmt.Errorf("spec %s: decode %s: %w", hash, where, err)
	}
	return &spec, nil
}

// CheckRunLogPart checks the names of a run log part about to be stored.
func CheckRunLogPart(runID, part string) error {
	if err := backend.ValidateName("run", runID); err != nil {
		return fmt.Errorf("put run log: %w", err)
	}
	if err := backend.ValidateName("log part", part); err != nil {
		return fmt.Errorf("put run log of %s: %w", runID, err)
	}
	return nil
}

// DecodeEntry decodes a state entry.
func DecodeEntry(where string, data []byte) (backend.StateEntry, error) {
	var e backend.StateEntry
	if err := DecodeJSON(data, &e); err != nil {
		return e, fmt.Errorf("decode %s: %w", where, err)
	}
	return e, nil
}
