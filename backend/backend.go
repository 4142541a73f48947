// Package backend stores what kumo records: releases (numbered per project and
// workspace), specs by content hash, the per-resource state of a release that is
// still running, workspaces, and the logs of runs.
//
// Store implements Backend once, over a small Driver that only stores bytes at
// keys (backend/local: files, backend/s3: objects): the Store checks arguments
// and the context before the driver is called, lays out the keys, encodes and
// decodes records, keeps revisions gapless (from the floor the release history
// limit raises, store_floor.go), and wraps the driver's errors naming the
// record they concern. Drivers pass backendtest.RunDriver, which runs the
// conformance suite (backendtest.Run) on a Store over them.
//
// A release's state is written one resource at a time while it runs (PutStateEntry),
// so a crash loses nothing and an apply writes bytes linear in its size; the entries
// are folded into the release once, when it ends.
package backend

import (
	"context"
	"errors"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/engine/gitsource"
)

// Backend is where releases, specs and in-flight state live.
//
// Every method checks project and workspace names with ValidateName (errors wrap
// ErrInvalidName), returns ctx.Err() for a canceled context, and returns errors that
// wrap ErrNotFound / ErrRevisionExists where documented and name what they concern.
// backendtest.Run checks all of this; Store does it for every driver.
type Backend interface {
	// PutSpec stores spec under its content hash (engine.HashSpec) and returns it.
	PutSpec(ctx context.Context, spec *engine.Spec) (hash string, err error)
	// GetSpec returns the spec stored under hash, or ErrNotFound.
	GetSpec(ctx context.Context, hash string) (*engine.Spec, error)

	// CreateRelease stores r as a new revision. It fails with ErrRevisionExists when
	// r.Revision is already taken, so two creators never get the same revision;
	// a revision the release history limit removed counts as taken.
	// Revisions count from 1 without gaps: any revision other than latest+1 that is
	// not taken is refused with a plain error.
	// On success r.Version is the stored copy's version.
	CreateRelease(ctx context.Context, r *engine.Release) error
	// UpdateRelease replaces an existing revision, or fails with ErrNotFound. It
	// writes only over the copy r was read as (r.Version, required): when the stored
	// release changed since, it fails with ErrConflict and changes nothing. On
	// success r.Version is the new copy's version.
	UpdateRelease(ctx context.Context, r *engine.Release) error
	// GetRelease returns one revision, with its Version, or ErrNotFound (for a
	// revision the release history limit removed, an error naming it and the
	// oldest kept revision).
	// Releases returned by LatestRelease and ListReleases carry their Version too.
	GetRelease(ctx context.Context, project, workspace string, revision int) (*engine.Release, error)
	// LatestRelease returns the highest revision, or ErrNotFound when there is none.
	LatestRelease(ctx context.Context, project, workspace string) (*engine.Release, error)
	// LatestReleaseHead is LatestRelease's revision, phase and count of
	// recorded resources, without decoding the resources.
	LatestReleaseHead(ctx context.Context, project, workspace string) (ReleaseHead, error)
	// ListReleases returns every kept revision in ascending order (none: empty,
	// no error): gapless from the oldest one the release history limit
	// (GCPolicy.Releases) kept, 1 when it removed none.
	ListReleases(ctx context.Context, project, workspace string) ([]*engine.Release, error)
	// ListReleaseSummaries is ListReleases without the specs and states: each
	// release's own fields, how many resources its spec and state hold and
	// what it keeps in storage, read from its release file alone.
	ListReleaseSummaries(ctx context.Context, project, workspace string) ([]ReleaseSummary, error)

	// PutStateEntry records the outcome of one resource of a running release;
	// a later put for the same ID replaces it. The release must exist (else
	// ErrNotFound) and entry.ID must not be empty.
	PutStateEntry(ctx context.Context, key ReleaseKey, entry StateEntry) error
	// PutStateEntries records the outcomes of several resources in one write
	// (no entries: none). An entry put alone wins over a batched one for the
	// same ID; among batches the one written last wins. Same rules otherwise.
	PutStateEntries(ctx context.Context, key ReleaseKey, entries []StateEntry) error
	// GetStateEntry returns the entry for id, and whether there is one.
	GetStateEntry(ctx context.Context, key ReleaseKey, id string) (StateEntry, bool, error)
	// ListStateEntries returns every entry of the release, by resource ID; a release
	// without entries gives an empty map.
	ListStateEntries(ctx context.Context, key ReleaseKey) (map[string]StateEntry, error)
	// ClearStateEntries drops the entries once they are folded into the release;
	// clearing a release without entries is no error.
	ClearStateEntries(ctx context.Context, key ReleaseKey) error
	// PutPreview keeps a running release's previews as its run took them,
	// replacing any kept before (the release must exist, else ErrNotFound);
	// ClearStateEntries drops them with the entries. GetPreview returns
	// them, and whether there are any.
	PutPreview(ctx context.Context, key ReleaseKey, p RecordedPreview) error
	GetPreview(ctx context.Context, key ReleaseKey) (RecordedPreview, bool, error)
	// ListProjects returns, sorted, the projects that have at least one release in
	// workspace (none: empty, no error).
	ListProjects(ctx context.Context, workspace string) ([]string, error)

	// CreateWorkspace stores a new workspace, or fails with ErrExists.
	CreateWorkspace(ctx context.Context, ws *engine.Workspace) error
	// PutWorkspace creates or replaces a workspace.
	PutWorkspace(ctx context.Context, ws *engine.Workspace) error
	// GetWorkspace returns a stored workspace, or ErrNotFound. (The default
	// workspace exists implicitly; that is the caller's business, not the backend's.)
	GetWorkspace(ctx context.Context, name string) (*engine.Workspace, error)
	// ListWorkspaces returns the stored workspaces' names, sorted.
	ListWorkspaces(ctx context.Context) ([]string, error)
	// DeleteWorkspace removes a stored workspace, or fails with ErrNotFound. It does
	// not look at releases: refusing to delete a workspace in use is the caller's.
	DeleteWorkspace(ctx context.Context, name string) error

	// PutSource stores a git source (with create, only a new name: ErrExists
	// otherwise); GetSource returns one or ErrNotFound; ListSources names them,
	// sorted; DeleteSource removes one or fails with ErrNotFound.
	PutSource(ctx context.Context, src *gitsource.Source, create bool) error
	GetSource(ctx context.Context, name string) (*gitsource.Source, error)
	ListSources(ctx context.Context) ([]string, error)
	DeleteSource(ctx context.Context, name string) error
	// GetSyncState returns the sync state of a stack (empty when never
	// synced); PutSyncState stores it.
	GetSyncState(ctx context.Context, project, workspace string) (*gitsource.SyncState, error)
	PutSyncState(ctx context.Context, st *gitsource.SyncState) error

	// PutRunLog stores one part of a run's log (runID and part are checked with
	// ValidateName). Writing a part again replaces it, so a retried activity does
	// not duplicate its lines.
	PutRunLog(ctx context.Context, runID, part string, data []byte) error
	// RunLog returns a run's log: its parts concatenated in part-name order, or
	// ErrNotFound when the run has none.
	RunLog(ctx context.Context, runID string) ([]byte, error)

	// PutDriftReport stores one drift check's report (named by its run ID and
	// check time) and prunes the stack's reports to the newest keep (<= 0:
	// drift.DefaultKeep).
	PutDriftReport(ctx context.Context, r *drift.Report, keep int) error
	// DriftReport returns the report of run runID, or the latest with runID "";
	// ErrNotFound when there is none.
	DriftReport(ctx context.Context, project, workspace, runID string) (*drift.Report, error)
	// DriftReports returns a stack's stored reports, oldest first.
	DriftReports(ctx context.Context, project, workspace string) ([]*drift.Report, error)

	// AppendAudit appends one entry to the audit log: never replaced, never
	// lost to a concurrent append by another server. An entry appended
	// again with the same ID and Time is kept once.
	AppendAudit(ctx context.Context, e AuditEntry) error
	// ListAudit returns the entries f selects, oldest first.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)

	// ClaimRequest records an idempotent request unless its key was
	// recorded before: then it returns that record and an error wrapping
	// ErrExists (store_requests.go).
	ClaimRequest(ctx context.Context, r RequestRecord) (RequestRecord, error)
	// GetRequest returns a request's record, or ErrNotFound.
	GetRequest(ctx context.Context, key string) (RequestRecord, error)
	// PutRequest replaces a claimed request's record (with its run).
	PutRequest(ctx context.Context, r RequestRecord) error
	// DeleteRequest forgets a claimed request whose run did not start.
	DeleteRequest(ctx context.Context, key string) error

	// SealText seals a text only workers should read (a webhook URL, which
	// may hold a token) for project and workspace, so that it can travel in
	// workflow inputs without a decoded history holding it in clear. Without
	// a sealer (no codec key) it returns "", nil: keep the text as it is.
	SealText(project, workspace, what, text string) (string, error)
	// OpenText opens what SealText sealed for the same project, workspace
	// and what; anything else fails, never echoing the text.
	OpenText(project, workspace, what, sealed string) (string, error)
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
	// Retained: with Deleted, the resource was left live because its
	// delete policy is retain; kumo no longer manages it.
	Retained bool `json:"retained,omitempty"`
}

var (
	ErrNotFound       = errors.New("not found")
	ErrRevisionExists = errors.New("revision already exists")
	// ErrExists is returned when creating something (a workspace) that exists.
	ErrExists = errors.New("already exists")
	// ErrConflict is returned by UpdateRelease when the stored release changed
	// since it was read.
	ErrConflict = errors.New("changed by another writer")
)

// Settle returns once b has finished what its calls left to do in the
// background (the local backend frees the space of what it removed or
// replaced afterwards): for a process about to exit. Other backends have
// nothing to wait for.
func Settle(b Backend) {
	if s, ok := b.(interface{ Wait() }); ok {
		s.Wait()
	}
}
