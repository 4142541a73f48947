package backend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The floor of a workspace's release history: the oldest revision kept
// (history.go decides it). Revisions are gapless from the floor to the latest.
// A collection raises the floor before it removes any revision under it, so
// that a crash between the two leaves revisions under the floor, which every
// reader ignores and the next collection removes; no reader ever meets a gap
// above it. The floor only rises: it is written over the copy it was read as.
//
// Without a floor object nothing was ever removed and the floor is 1.

// floorMaxTries bounds how often a reader starts over because a collection
// raised the floor while it read.
const floorMaxTries = 8

func floorKey(project, workspace string) string {
	return workspaceDir(project, workspace) + "/" + floorMark
}

// parseFloor decodes a floor object (a decimal revision, at least 1).
func parseFloor(data []byte) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("holds %q, not a revision", truncate(string(data), 32))
	}
	return n, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// readFloor returns the oldest kept revision of project/workspace (1 when none
// was ever removed) and the version of its floor object ("": none). A floor
// object that does not decode is an error: which revisions exist would be
// unknown.
func (s *Store) readFloor(ctx context.Context, project, workspace string) (int, string, error) {
	key := floorKey(project, workspace)
	data, version, err := s.d.Read(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return 1, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("oldest kept revision of %s/%s: %w", project, workspace, err)
	}
	n, err := parseFloor(data)
	if err != nil {
		return 0, "", fmt.Errorf("oldest kept revision of %s/%s: %s %w", project, workspace, s.d.Where(key), err)
	}
	return n, version, nil
}

// raiseFloor makes the floor of project/workspace at least to, writing over
// the copy it read so that of two collections the higher floor wins.
func (s *Store) raiseFloor(ctx context.Context, project, workspace string, to int) error {
	key := floorKey(project, workspace)
	for range floorMaxTries {
		floor, version, err := s.readFloor(ctx, project, workspace)
		if err != nil {
			return err
		}
		if floor >= to {
			return nil
		}
		_, err = s.write(ctx, key, []byte(strconv.Itoa(to)), Condition{CreateOnly: version == "", IfVersion: version})
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrExists) && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("raise the oldest kept revision of %s/%s to %d: %w", project, workspace, to, err)
		}
	}
	return fmt.Errorf("raise the oldest kept revision of %s/%s to %d: %s kept changing (%d tries)", project, workspace, to, s.d.Where(key), floorMaxTries)
}

// prunedError is the error for revision key, which is under the floor of its
// workspace: removed by the release history limit.
func prunedError(op string, key ReleaseKey, floor int) error {
	return fmt.Errorf("%s %s: %w: revision %d of %s/%s was removed by the release history limit (--retain-releases); its oldest kept revision is %d",
		op, key, ErrNotFound, key.Revision, key.Project, key.Workspace, floor)
}
