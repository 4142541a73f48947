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

// recordFormat is the release file's format; a file without it (plain YAML or
// JSON, the spec and state inline) is format 1 and reads as it always did.
const recordFormat = 2

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

// splitChunks cuts rs into chunks; each chunk's clear JSON is returned with it.
func splitChunks(rs []engine.Resource) (chunks [][]engine.Resource, clear [][]byte, err error) {
	start, size := 0, 0
	var parts [][]byte
	flush := func(end int) {
		if end > start {
			chunks = append(chunks, rs[start:end])
			clear = append(clear, joinJSON(parts))
		}
		start, size, parts = end, 0, nil
	}
	for i := range rs {
		b, err := json.Marshal(rs[i])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: encode: %w", rs[i].ID, err)
		}
		parts = append(parts, b)
		size += len(b)
		if chunkBoundary(rs[i].ID) || i+1-start >= chunkMaxResources || size >= chunkMaxBytes {
			flush(i + 1)
		}
	}
	flush(len(rs))
	return chunks, clear, nil
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
	for _, c := range parts.State {
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
	if r.Spec != nil {
		hash, there, err := s.putSpec(ctx, r.Spec)
		if err != nil {
			return fail(err)
		}
		if there {
			found.spec = r.Spec
		}
		rec.Parts.SpecRef = hash
		rec.Parts.SpecResources = len(r.Spec.Resources)
	}
	if r.State != nil {
		rec.Parts.HasState = true
		rec.Parts.StateResources = len(r.State.Resources)
		rec.Parts.NilResources = r.State.Resources == nil
		refs, err := s.putChunks(ctx, key, r.State.Resources, prior, found)
		if err != nil {
			return fail(err)
		}
		rec.Parts.State = refs
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

// putChunks stores the chunks of rs that the prior revisions do not already
// reference, and returns the chunks rs is made of.
func (s *Store) putChunks(ctx context.Context, key ReleaseKey, rs []engine.Resource, prior []int, found *reused) ([]chunkRef, error) {
	chunks, clear, err := splitChunks(rs)
	if err != nil {
		return nil, err
	}
	keyID, err := s.sealerKeyID(key.Project, key.Workspace)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	old, err := s.priorChunks(ctx, key, keyID, prior...)
	if err != nil {
		return nil, err
	}
	refs := make([]chunkRef, len(chunks))
	err = forEach(ctx, len(chunks), func(ctx context.Context, i int) error {
		sum := sha256.Sum256(clear[i])
		digest := hex.EncodeToString(sum[:])
		if c, ok := old[digest]; ok && c.Resources == len(chunks[i]) {
			refs[i] = c
			return nil
		}
		c, data, there, err := s.putChunk(ctx, key, chunks[i], clear[i], digest)
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

// putChunk writes one chunk (rs, whose clear JSON is clear) and returns it
// with its stored bytes; found says it was there already.
func (s *Store) putChunk(ctx context.Context, key ReleaseKey, rs []engine.Resource, clear []byte, digest string) (chunkRef, []byte, bool, error) {
	text := clear
	if s.sealer != nil {
		sealed, err := s.sealResources(rs, releaseScope(key.Project, key.Workspace))
		if err != nil {
			return chunkRef{}, nil, false, err
		}
		if text, err = json.Marshal(sealed); err != nil {
			return chunkRef{}, nil, false, fmt.Errorf("encode: %w", err)
		}
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
	ref := chunkRef{Key: name, Resources: len(rs), Bytes: int64(len(data)), Digest: digest}
	// Named by its bytes: one already there holds the same.
	_, err = s.write(ctx, chunkKey(key.Project, key.Workspace, name), data, Condition{CreateOnly: true})
	if errors.Is(err, ErrExists) {
		return ref, data, true, nil
	}
	if err != nil {
		return chunkRef{}, nil, false, fmt.Errorf("state chunk %s (%s, ...): %w", name, rs[0].ID, err)
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
		rs, err := s.readChunks(ctx, key, rec.Parts.State)
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
	if rec.Parts == nil || rec.Parts.Format != recordFormat {
		f := 0
		if rec.Parts != nil {
			f = rec.Parts.Format
		}
		return fmt.Errorf("release %s: %s is of record format %d; this kumo reads formats 1 and %d", key, where, f, recordFormat)
	}
	if rec.Spec != nil || rec.State != nil {
		return fmt.Errorf("release %s: %s holds its spec or state inline, which record format %d never does", key, where, recordFormat)
	}
	return nil
}

// readChunks reads the state chunks refs, a bounded number at a time, and
// returns their resources in order, opened.
func (s *Store) readChunks(ctx context.Context, key ReleaseKey, refs []chunkRef) ([]engine.Resource, error) {
	parts := make([][]engine.Resource, len(refs))
	err := forEach(ctx, len(refs), func(ctx context.Context, i int) error {
		rs, err := s.readChunk(ctx, key, refs[i])
		parts[i] = rs
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

func (s *Store) readChunk(ctx context.Context, key ReleaseKey, ref chunkRef) ([]engine.Resource, error) {
	if !validHash(ref.Key) {
		return nil, fmt.Errorf("state chunk %q: not a hex sha256", ref.Key)
	}
	objKey := chunkKey(key.Project, key.Workspace, ref.Key)
	where := s.d.Where(objKey)
	data, _, err := s.read(ctx, objKey, "state chunk "+ref.Key)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.Key {
		return nil, fmt.Errorf("state chunk %s: %s does not hold what was written there (its sha256 differs)", ref.Key, where)
	}
	text, err := decompress(data)
	if err != nil {
		return nil, fmt.Errorf("state chunk %s: %s: %w", ref.Key, where, err)
	}
	var rs []engine.Resource
	if err := decodeJSON(text, &rs); err != nil {
		return nil, fmt.Errorf("state chunk %s: decode %s: %w", ref.Key, where, err)
	}
	if len(rs) != ref.Resources {
		return nil, fmt.Errorf("state chunk %s: %s holds %d resources, the release names %d", ref.Key, where, len(rs), ref.Resources)
	}
	normalizeResources(rs)
	if err := s.openResources(rs, where, releaseScope(key.Project, key.Workspace)); err != nil {
		return nil, err
	}
	return rs, nil
}
