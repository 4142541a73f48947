// Package backend stores what kumo records: releases (numbered per project and
// workspace), specs by content hash, and the per-resource state of a release that is
// still running. Implementations (local filesystem, ...) satisfy Backend and pass
// the conformance suite in backendtest.
//
// A release's state is written one resource at a time while it runs (PutStateEntry),
// so a crash loses nothing and an apply writes bytes linear in its size; the entries
// are folded into the release once, when it ends.
package backend

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/engine"
)

// Backend is where releases, specs and in-flight state live.
//
// Every method checks project and workspace names with ValidateName (errors wrap
// ErrInvalidName), returns ctx.Err() for a canceled context, and returns errors that
// wrap ErrNotFound / ErrRevisionExists where documented and name what they concern.
// backendtest.Run checks all of this.
type Backend interface {
	// PutSpec stores spec under its content hash (engine.HashSpec) and returns it.
	PutSpec(ctx context.Context, spec *engine.Spec) (hash string, err error)
	// GetSpec returns the spec stored under hash, or ErrNotFound.
	GetSpec(ctx context.Context, hash string) (*engine.Spec, error)

	// CreateRelease stores r as a new revision. It fails with ErrRevisionExists when
	// r.Revision is already taken, so two creators never get the same revision.
	// Revisions count from 1 without gaps: any revision other than latest+1 that is
	// not taken is refused with a plain error.
	CreateRelease(ctx context.Context, r *engine.Release) error
	// UpdateRelease replaces an existing revision, or fails with ErrNotFound.
	UpdateRelease(ctx context.Context, r *engine.Release) error
	// GetRelease returns one revision, or ErrNotFound.
	GetRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error)
	// LatestRelease returns the highest revision, or ErrNotFound when there is none.
	LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error)
	// ListReleases returns every revision in ascending order (none: empty, no error).
	ListReleases(ctx context.Context, project, workspace string) ([]*engine.Release, error)

	// PutStateEntry records the outcome of one resource of a running release;
	// a later put for the same ID replaces it. The release must exist (else
	// ErrNotFound) and entry.ID must not be empty.
	PutStateEntry(ctx context.Context, key ReleaseKey, entry StateEntry) error
	// GetStateEntry returns the entry for id, and whether there is one.
	GetStateEntry(ctx context.Context, key ReleaseKey, id string) (StateEntry, bool, error)
	// ListStateEntries returns every entry of the release, by resource ID; a release
	// without entries gives an empty map.
	ListStateEntries(ctx context.Context, key ReleaseKey) (map[string]StateEntry, error)
	// ClearStateEntries drops the entries once they are folded into the release;
	// clearing a release without entries is no error.
	ClearStateEntries(ctx context.Context, key ReleaseKey) error
}

// ReleaseKey names one revision.
type ReleaseKey struct {
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Revision  int    `json:"revision"`
}

// StateEntry is one resource's outcome in a running release: the live resource
// after apply, or a tombstone once deleted.
type StateEntry struct {
	ID       string           `json:"id"`
	Resource *engine.Resource `json:"resource,omitempty"`
	Deleted  bool             `json:"deleted,omitempty"`
}

var (
	ErrNotFound       = errors.New("not found")
	ErrRevisionExists = errors.New("revision already exists")
)
