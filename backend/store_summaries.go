package backend

import (
	"context"
	"fmt"

	"github.com/kumoproj/kumo/engine"
)

// ReleaseSummary is a release as a listing shows it, read from its release
// file alone: never its spec or state chunks.
type ReleaseSummary struct {
	// Release is the release without its spec and state (both nil).
	Release *engine.Release
	// SpecResources and StateResources count the resources of its spec and
	// state; HasState says whether it records a state at all.
	SpecResources, StateResources int
	HasState                      bool
	// SpecRef is the hash under which its spec is stored apart (record
	// format 2); empty when the spec is inline.
	SpecRef string
	// Stored is how many bytes its release file and state chunks hold in
	// storage (chunks shared with other revisions counted for each; the
	// spec, stored once by hash, apart). For a release of record format 1 it
	// is its release file, spec and state inline.
	Stored int64
}

// ListReleaseSummaries returns every kept revision's summary in ascending order;
// none gives an empty list. Each reads one release file: for a release of
// record format 2 a few hundred bytes, however many resources it records.
func (s *Store) ListReleaseSummaries(ctx context.Context, project, workspace string) ([]ReleaseSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateWorkspace(project, workspace); err != nil {
		return nil, fmt.Errorf("list release summaries: %w", err)
	}
	if dr, ok := s.d.(DirReader); ok {
		return s.listSummariesDir(ctx, dr, project, workspace)
	}
	return readKept(ctx, s, project, workspace, "list release summaries", func(ctx context.Context, key ReleaseKey) (ReleaseSummary, error) {
		objKey := releaseKey(key)
		data, version, err := s.read(ctx, objKey, "release "+key.String())
		if err != nil {
			return ReleaseSummary{}, err
		}
		sum, err := s.summarize(key, s.d.Where(objKey), data)
		if err != nil {
			return ReleaseSummary{}, err
		}
		sum.Release.Version = version
		return sum, nil
	})
}

// summarize decodes the summary of the release file data (read from where
// for key).
func (s *Store) summarize(key ReleaseKey, where string, data []byte) (ReleaseSummary, error) {
	if isCompressed(data) {
		text, err := decompress(data)
		if err != nil {
			return ReleaseSummary{}, fmt.Errorf("release %s: %s: %w", key, where, err)
		}
		var rec releaseRecord
		if err := decodeJSON(text, &rec); err != nil {
			return ReleaseSummary{}, fmt.Errorf("release %s: decode %s: %w", key, where, err)
		}
		if err := checkRecord(key, where, &rec); err != nil {
			return ReleaseSummary{}, err
		}
		r := rec.Release
		sum := ReleaseSummary{Release: &r, SpecResources: rec.Parts.SpecResources, StateResources: rec.Parts.StateResources,
			HasState: rec.Parts.HasState, SpecRef: rec.Parts.SpecRef, Stored: int64(len(data))}
		for _, c := range rec.Parts.chunks() {
			sum.Stored += c.Bytes
		}
		return sum, nil
	}
	// Record format 1: the spec and state are inline, decoded only to count
	// them (their resources are skipped, not decoded).
	var r struct {
		engine.Release
		Spec *struct {
			Resources []struct{} `json:"resources"`
		} `json:"spec"`
		State *struct {
			Resources []struct{} `json:"resources"`
		} `json:"state"`
	}
	if err := decodeYAML(data, &r); err != nil {
		return ReleaseSummary{}, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if err := checkReleaseKey(key, where, KeyOf(&r.Release)); err != nil {
		return ReleaseSummary{}, err
	}
	rel := r.Release
	rel.Spec, rel.State = nil, nil
	sum := ReleaseSummary{Release: &rel, Stored: int64(len(data))}
	if r.Spec != nil {
		sum.SpecResources = len(r.Spec.Resources)
	}
	if r.State != nil {
		sum.HasState, sum.StateResources = true, len(r.State.Resources)
	}
	return sum, nil
}
