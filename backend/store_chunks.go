package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/internal/keyring"
)

// How a Store keeps a release (record format 2), so that a revision costs bytes
// for what changed, not for everything it records:
//
//   - the release file (<revision>.yaml) holds the release without its spec and
//     state resources, plus recordParts, compressed (compress.go): a few
//     hundred bytes, all that a head or a listing reads;
//   - the spec is stored once under its content hash (specs/, PutSpec) and the
//     release names it (SpecRef);
//   - the state's resources are cut into chunks at content-defined boundaries
//     (chunkBoundary: by resource ID, so inserting a resource moves no other
//     chunk's boundary), each stored compressed under the sha256 of its stored
//     bytes in releases/<p>/<w>/chunks/. A chunk whose clear content equals one
//     the previous revision (or the copy being replaced) already references is
//     referenced again instead of written: a no-op re-apply writes the release
//     file only.
//
// Chunks are named by their stored bytes and checked against that name when
// read, so an object altered in the bucket fails naming it; sealed values in a
// chunk are bound to the release's project and workspace like those of any
// release (sealed.go).

// recordFormat is the format a release file is written in; a file without
// one (plain YAML or JSON, the spec and state inline) is format 1 and reads
// as it always did. Format 2 chunks hold the state's resources whole; format
// 3 chunks hold them against the spec, their identities apart
// (state_delta.go). A kumo that reads only format 2 refuses a format 3 file
// rather than misread its chunks.
const (
	recordFormat      = 3
	recordFormatWhole = 2
)

func knownRecordFormat(f int) bool { return f == recordFormat || f == recordFormatWhole }

// releaseRecord is a release file of format 2.
type releaseRecord struct {
	engine.Release
	Parts *recordParts `json:"kumoRecord,omitempty"`
}

// recordParts says where the spec and state of a release of format 2 are.
type recordParts struct {
	Format int `json:"format"`
	// SpecRef is the hash the spec is stored under in specs/ ("": no spec).
	SpecRef string `json:"specRef,omitempty"`
	// SpecResources is how many resources the spec holds, for summaries.
	SpecResources int `json:"specResources,omitempty"`
	// HasState: the release records a state (possibly of no resources).
	HasState bool `json:"hasState,omitempty"`
	// StateResources is how many resources the state records, for heads.
	StateResources int `json:"stateResources,omitempty"`
	// NilResources: the state's resource list was nil rather than empty
	// (kept so that a release reads back as it was written).
	NilResources bool       `json:"nilResources,omitempty"`
	State        []chunkRef `json:"state,omitempty"`
	// Identity (format 3) are the chunks of the state's identity entries.
	Identity []chunkRef `json:"identity,omitempty"`
	// StateDigest (format 3) is the hex sha256 of the JSON of the state's
	// resources rebuilt from patches (state_delta.go), which the state
	// rebuilt when read must match. It covers no resource holding sealed
	// values, so it is kept in clear: a state without secrets reads with
	// any codec key, or none.
	StateDigest string `json:"stateDigest,omitempty"`
}

// chunks are all the chunks the record references.
func (p *recordParts) chunks() []chunkRef {
	return append(slices.Clip(p.State), p.Identity...)
}

// chunkRef names one chunk of a state.
type chunkRef struct {
	// Key is the hex sha256 of the chunk's stored bytes, its object's name.
	Key string `json:"key"`
	// Resources is how many resources it holds; Bytes, its stored size.
	Resources int   `json:"resources"`
	Bytes     int64 `json:"bytes,omitempty"`
	// Digest is the hex sha256 of its clear content (the resources' JSON before
	// sealing), which later revisions compare theirs with; with a sealer it is
	// itself sealed, so the backend never holds a hash of clear secrets.
	Digest string `json:"digest"`
}

const chunksDir = "chunks"

func chunkKey(project, workspace, key string) string {
	return workspaceDir(project, workspace) + "/" + chunksDir + "/" + key
}

// Chunk sizes: a boundary after about one resource in chunkAverage (by the
// hash of its ID), and at the latest after chunkMaxResources resources or
// chunkMaxBytes of clear JSON, so one chunk never holds much memory.
const (
	chunkAverage      = 1024
	chunkMaxResources = 4096
	chunkMaxBytes     = 8 << 20
)

func chunkBoundary(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%chunkAverage == 0
}

// splitChunks cuts a list of items (each's ID and JSON) into chunks, and
// returns where each chunk ends.
func splitChunks(ids []string, parts [][]byte) (ends []int) {
	start, size := 0, 0
	for i := range ids {
		size += len(parts[i])
		if chunkBoundary(ids[i]) || i+1-start >= chunkMaxResources || size >= chunkMaxBytes {
			ends = append(ends, i+1)
			start, size = i+1, 0
		}
	}
	if start < len(ids) {
		ends = append(ends, len(ids))
	}
	return ends
}

// joinJSON makes a JSON array of encoded values.
func joinJSON(parts [][]byte) []byte {
	n := 2
	for _, p := range parts {
		n += len(p) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, ']')
}

// digestScope binds a sealed chunk digest to its project and workspace.
func digestScope(project, workspace string) []byte {
	return keyring.AAD("chunk digest", project, workspace)
}

// reusable maps the clear digests of the chunks that earlier records of the
// same release history reference (see priorChunks) to those chunks.
type reusable map[string]chunkRef

// sealerKeyID is the key a Store with a sealer seals with now ("" without a
// sealer): only chunks sealed with it are reused, so that a record written
// after a key rotation or after a sealer was configured holds nothing sealed
// with an older key, or nothing in clear.
func (s *Store) sealerKeyID(project, workspace string) (string, error) {
	if s.sealer == nil {
		return "", nil
	}
	probe, err := s.sealer.Seal(nil, digestScope(project, workspace))
	if err != nil {
		return "", err
	}
	id, _, _ := keyring.SplitSealed(probe)
	return id, nil
}

// addReusable adds the chunks of parts (a record of project/workspace) whose
// digest opens with the current key (or, without a sealer, is in clear).
func (s *Store) addReusable(out reusable, project, workspace, keyID string, parts *recordParts) {
	if parts == nil {
		return
	}
	for _, c := range parts.chunks() {
		d := c.Digest
		if s.sealer == nil {
			if keyring.IsSealed(d) {
				continue
			}
		} else {
			id, _, ok := keyring.SplitSealed(d)
			if !ok || id != keyID {
				continue
			}
			clear, err := s.sealer.Open(d, digestScope(project, workspace))
			if err != nil {
				continue
			}
			d = string(clear)
		}
		out[d] = c
	}
}

// priorChunks returns the chunks that the records of revs (of key's project
// and workspace) reference, by clear digest. Only a failure to read is an
// error: a record of format 1, or none, adds nothing.
func (s *Store) priorChunks(ctx context.Context, key ReleaseKey, keyID string, revs ...int) (reusable, error) {
	out := reusable{}
	for _, rev := range revs {
		if rev < 1 {
			continue
		}
		k := key
		k.Revision = rev
		data, _, err := s.d.Read(ctx, releaseKey(k))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !isCompressed(data) {
			continue
		}
		text, err := decompress(data)
		if err != nil {
			continue // rewritten whole below; reading it reports the damage
		}
		var rec struct {
			Parts *recordParts `json:"kumoRecord"`
		}
		if json.Unmarshal(text, &rec) == nil {
			s.addReusable(out, key.Project, key.Workspace, keyID, rec.Parts)
		}
	}
	return out, nil
}

// encodeRecord stores the spec and the new state chunks of r (already checked,
// not yet sealed) and returns its release file. prior are the revisions whose
// chunks may be referenced again.
func (s *Store) encodeRecord(ctx context.Context, op string, r *engine.Release, prior ...int) (ReleaseKey, []byte, *reused, error) {
	if r == nil {
		return ReleaseKey{}, nil, nil, fmt.Errorf("%s release: release is nil", op)
	}
	key := KeyOf(r)
	if err := key.Validate(); err != nil {
		return key, nil, nil, fmt.Errorf("%s release: %w", op, err)
	}
	fail := func(err error) (ReleaseKey, []byte, *reused, error) {
		return key, nil, nil, fmt.Errorf("%s release %s: %w", op, key, err)
	}
	found := &reused{}
	rec := releaseRecord{Release: *r, Parts: &recordParts{Format: recordFormat}}
	rec.Spec, rec.State = nil, nil
	// The spec (hashed whole) and the state (encoded against it) are stored
	// side by side: neither waits for the other, and they set apart fields.
	var specErr error
	var spec sync.WaitGroup
	if r.Spec != nil {
		spec.Go(func() {
			hash, there, err := s.putSpec(ctx, r.Spec)
			if err != nil {
				specErr = err
				return
			}
			if there {
				found.spec, found.specHash = r.Spec, hash
			}
			rec.Parts.SpecRef = hash
			rec.Parts.SpecResources = len(r.Spec.Resources)
		})
	}
	if r.State != nil {
		rec.Parts.HasState = true
		rec.Parts.StateResources = len(r.State.Resources)
		rec.Parts.NilResources = r.State.Resources == nil
		if err := s.putState(ctx, key, r.Spec, r.State.Resources, rec.Parts, prior, found); err != nil {
			spec.Wait()
			return fail(err)
		}
	}
	if spec.Wait(); specErr != nil {
		return fail(specErr)
	}
	text, err := json.Marshal(rec)
	if err != nil {
		return fail(fmt.Errorf("encode: %w", err))
	}
	data, err := compress(text)
	if err != nil {
		return fail(err)
	}
	return key, data, found, nil
}

// putState stores the chunks of the state rs (against spec) that the prior
// revisions do not already reference, and records them in parts.
func (s *Store) putState(ctx context.Context, key ReleaseKey, spec *engine.Spec, rs []engine.Resource, parts *recordParts, prior []int, found *reused) error {
	sc := releaseScope(key.Project, key.Workspace)
	var sensitive func(engine.Resource) bool
	var seal func(engine.Resource) (engine.Resource, error)
	if s.sealer != nil {
		sensitive = hasSensitive
		seal = func(r engine.Resource) (engine.Resource, error) { return s.sealResource(r, sc) }
	}
	enc, err := encodeState(spec, rs, sensitive, seal)
	if err != nil {
		return err
	}
	keyID, err := s.sealerKeyID(key.Project, key.Workspace)
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	old, err := s.priorChunks(ctx, key, keyID, prior...)
	if err != nil {
		return err
	}
	if parts.State, err = s.putChunks(ctx, key, enc.entryIDs, enc.entries, enc.storedEntries, old, found); err != nil {
		return err
	}
	if parts.Identity, err = s.putChunks(ctx, key, enc.identityIDs, enc.identities, nil, old, found); err != nil {
		return err
	}
	parts.StateDigest = enc.digest
	return nil
}

// putChunks stores the chunks of a list of items (their IDs, clear JSON and,
// where it differs, stored JSON) that old does not already hold, and returns
// the chunks the list is made of.
func (s *Store) putChunks(ctx context.Context, key ReleaseKey, ids []string, clear, stored [][]byte, old reusable, found *reused) ([]chunkRef, error) {
	ends := splitChunks(ids, clear)
	refs := make([]chunkRef, len(ends))
	err := forEach(ctx, len(ends), func(ctx context.Context, i int) error {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		text := joinJSON(clear[start:ends[i]])
		sum := sha256.Sum256(text)
		digest := hex.EncodeToString(sum[:])
		if c, ok := old[digest]; ok && c.Resources == ends[i]-start {
			refs[i] = c
			return nil
		}
		if stored != nil && slices.ContainsFunc(stored[start:ends[i]], func(b []byte) bool { return b != nil }) {
			parts := make([][]byte, 0, ends[i]-start)
			for k := start; k < ends[i]; k++ {
				if stored[k] != nil {
					parts = append(parts, stored[k])
				} else {
					parts = append(parts, clear[k])
				}
			}
			text = joinJSON(parts)
		}
		c, data, there, err := s.putChunk(ctx, key, ids[start], ends[i]-start, text, digest)
		refs[i] = c
		if there {
			found.addChunk(chunkKey(key.Project, key.Workspace, c.Key), data)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return refs, nil
}

// putChunk writes one chunk of n items, the first of them first (text, as
// stored; digest, of its clear content) and returns it with its stored
// bytes; found says it was there already.
func (s *Store) putChunk(ctx context.Context, key ReleaseKey, first string, n int, text []byte, digest string) (chunkRef, []byte, bool, error) {
	if s.sealer != nil {
		var err error
		if digest, err = s.sealer.Seal([]byte(digest), digestScope(key.Project, key.Workspace)); err != nil {
			return chunkRef{}, nil, false, fmt.Errorf("seal chunk digest: %w", err)
		}
	}
	data, err := compress(text)
	if err != nil {
		return chunkRef{}, nil, false, err
	}
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	ref := chunkRef{Key: name, Resources: n, Bytes: int64(len(data)), Digest: digest}
	// Named by its bytes: one already there holds the same.
	_, err = s.write(ctx, chunkKey(key.Project, key.Workspace, name), data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		return ref, data, true, nil
	}
	if err != nil {
		return chunkRef{}, nil, false, fmt.Errorf("state chunk %s (%s, ...): %w", name, first, err)
	}
	return ref, data, false, nil
}

// decodeRecord decodes a release file of format 2 (text, decompressed, read
// from where) and reads its spec and state; it leaves Version to the caller.
func (s *Store) decodeRecord(ctx context.Context, key ReleaseKey, where string, text []byte) (*engine.Release, error) {
	var rec releaseRecord
	if err := decodeJSON(text, &rec); err != nil {
		return nil, fmt.Errorf("release %s: decode %s: %w", key, where, err)
	}
	if err := checkRecord(key, where, &rec); err != nil {
		return nil, err
	}
	r := rec.Release
	if ref := rec.Parts.SpecRef; ref != "" {
		spec, err := s.GetSpec(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("release %s (%s): %w", key, where, err)
		}
		r.Spec = spec
	}
	if rec.Parts.HasState {
		rs, err := s.readState(ctx, key, r.Spec, rec.Parts)
		if err != nil {
			return nil, fmt.Errorf("release %s (%s): %w", key, where, err)
		}
		if len(rs) != rec.Parts.StateResources {
			return nil, fmt.Errorf("release %s: %s records %d resources, its state chunks hold %d", key, where, rec.Parts.StateResources, len(rs))
		}
		if rs == nil && !rec.Parts.NilResources {
			rs = []engine.Resource{}
		}
		r.State = &engine.State{Resources: rs}
	}
	return &r, nil
}

// checkRecord refuses a release file that names another release or that is
// of an unknown format (written by a newer kumo: reading it as this one
// understands it would drop what it does not).
func checkRecord(key ReleaseKey, where string, rec *releaseRecord) error {
	if err := checkReleaseKey(key, where, KeyOf(&rec.Release)); err != nil {
		return err
	}
	if rec.Parts == nil || !knownRecordFormat(rec.Parts.Format) {
		f := 0
		if rec.Parts != nil {
			f = rec.Parts.Format
		}
		return fmt.Errorf("release %s: %s is of record format %d; this kumo reads formats 1 to %d", key, where, f, recordFormat)
	}
	if rec.Parts.Format == recordFormatWhole && (rec.Parts.Identity != nil || rec.Parts.StateDigest != "") {
		return fmt.Errorf("release %s: %s is of record format %d and names identity chunks or a state digest, which only format %d has", key, where, recordFormatWhole, recordFormat)
	}
	if rec.Spec != nil || rec.State != nil {
		return fmt.Errorf("release %s: %s holds its spec or state inline, which record format %d never does", key, where, recordFormat)
	}
	return nil
}

// readState reads the state a record's parts name; spec is its spec.
func (s *Store) readState(ctx context.Context, key ReleaseKey, spec *engine.Spec, parts *recordParts) ([]engine.Resource, error) {
	sc := releaseScope(key.Project, key.Workspace)
	if parts.Format == recordFormatWhole {
		return readChunks(ctx, s, key, parts.State, func(where string, rs []engine.Resource) error {
			normalizeResources(rs)
			return s.openResources(rs, where, sc)
		})
	}
	entries, err := readChunks(ctx, s, key, parts.State, func(where string, es []stateEntry) error {
		for i := range es {
			if es[i].Whole == nil {
				continue
			}
			normalizeResource(es[i].Whole)
			if err := s.openResource(es[i].Whole, where, sc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	identities, err := readChunks(ctx, s, key, parts.Identity, func(string, []identityEntry) error { return nil })
	if err != nil {
		return nil, err
	}
	if entries == nil && parts.NilResources {
		return nil, nil
	}
	rs, err := decodeState(spec, entries, identities, parts.StateDigest)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if rs == nil {
		rs = []engine.Resource{}
	}
	return rs, nil
}

// readChunks reads the chunks refs, a bounded number at a time, decodes each
// as a list of T and hands it to open with where it was read; it returns
// their items in order.
func readChunks[T any](ctx context.Context, s *Store, key ReleaseKey, refs []chunkRef, open func(where string, items []T) error) ([]T, error) {
	parts := make([][]T, len(refs))
	err := forEach(ctx, len(refs), func(ctx context.Context, i int) error {
		text, where, err := s.readChunk(ctx, key, refs[i])
		if err != nil {
			return err
		}
		var items []T
		if err := decodeJSON(text, &items); err != nil {
			return fmt.Errorf("state chunk %s: decode %s: %w", refs[i].Key, where, err)
		}
		if len(items) != refs[i].Resources {
			return fmt.Errorf("state chunk %s: %s holds %d entries, the release names %d", refs[i].Key, where, len(items), refs[i].Resources)
		}
		parts[i] = items
		return open(where, items)
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// readChunk reads one chunk, checks it against its name, and returns its
// clear text and where it was read.
func (s *Store) readChunk(ctx context.Context, key ReleaseKey, ref chunkRef) ([]byte, string, error) {
	if !validHash(ref.Key) {
		return nil, "", fmt.Errorf("state chunk %q: not a hex sha256", ref.Key)
	}
	objKey := chunkKey(key.Project, key.Workspace, ref.Key)
	where := s.d.Where(objKey)
	data, err := s.readNamed(ctx, objKey, "state chunk "+ref.Key)
	if err != nil {
		return nil, where, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.Key {
		return nil, where, fmt.Errorf("state chunk %s: %s does not hold what was written there (its sha256 differs)", ref.Key, where)
	}
	text, err := decompress(data)
	if err != nil {
		return nil, where, fmt.Errorf("state chunk %s: %s: %w", ref.Key, where, err)
	}
	return text, where, nil
}
