package backend

import "context"

// Driver is the storage under a Store: bytes at slash-separated keys. Everything
// kumo-specific (what a key is named, checking names, encoding records, context
// checks, naming the record in errors, revision numbering) is the Store's, so a
// driver only moves bytes. Drivers pass backendtest.RunDriver.
//
// Keys are built by the Store from checked names ("releases/p/w/1.yaml"); they
// never start or end with '/', and no segment is empty, "." or "..". A directory
// is a key prefix: List and DeleteAll take one without the trailing '/'.
//
// Errors wrap ErrNotFound, ErrExists or ErrConflict where documented, and name the
// file or object (Where) they concern; the Store adds which record it was. A
// driver may assume the context was live when the call started.
type Driver interface {
	// Read returns the bytes stored at key and their version (any string that
	// changes whenever the bytes are replaced), or an error wrapping ErrNotFound.
	Read(ctx context.Context, key string) (data []byte, version string, err error)
	// Exists reports whether key holds an object.
	Exists(ctx context.Context, key string) (bool, error)
	// Write stores data at key as one whole (a reader never sees part of it)
	// under cond, and returns the new version. With cond.CreateOnly it fails with
	// ErrExists when key holds an object; with cond.IfVersion it fails with
	// ErrNotFound when key holds none and with ErrConflict when the stored
	// version is another. A write that is refused changes nothing.
	Write(ctx context.Context, key string, data []byte, cond Condition) (version string, err error)
	// List returns the objects and directories directly under dir, in any order
	// (a missing dir: none, no error). Names are relative to dir.
	List(ctx context.Context, dir string) ([]Entry, error)
	// Delete removes the object at key, or fails with ErrNotFound.
	Delete(ctx context.Context, key string) error
	// DeleteAll removes everything under dir; a missing dir is no error.
	DeleteAll(ctx context.Context, dir string) error
	// Where names key for messages: a path, a URL.
	Where(key string) string
}

// Condition is the precondition of a Driver.Write; the zero value writes
// unconditionally.
type Condition struct {
	// CreateOnly writes only if key holds nothing.
	CreateOnly bool
	// IfVersion writes only over the object of this version.
	IfVersion string
}

// Entry is one name a Driver.List found.
type Entry struct {
	Name string
	Dir  bool
}

// DirReader is implemented by a driver that can read every object directly under
// dir, with its bytes and version, in one request (backend/postgres: one query).
// The Store uses it where it would otherwise read the objects of a listing one by
// one (ListReleases); a missing dir gives none, no error.
type DirReader interface {
	ReadDir(ctx context.Context, dir string) ([]Object, error)
}

// Object is one object a DirReader read: its name relative to the directory.
type Object struct {
	Name    string
	Data    []byte
	Version string
}
