package backend

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"reflect"

	"github.com/kumoproj/kumo/engine"
)

// How record format 3 keeps a state (the release's spec is its base):
//
// What an apiserver returns for an object is mostly what kumo sent, the spec's
// resource of the same ID, plus a few fields it set. So each resource of the
// state is a stateEntry holding a JSON merge patch (RFC 7386) from the spec's
// resource to the state's, and the fields that name one object for its whole
// life (metadata.uid and creationTimestamp: random and never compressible) go
// to identity entries in chunks of their own. An update of every object then
// rewrites the entries (a resourceVersion each) but references the identity
// chunks of the previous revision again.
//
// A resource the spec has no base for, one a merge patch cannot express (a
// null value in it), and, with a sealer, one holding sensitive values (sealed
// whole, as any state resource) is an entry holding the resource whole, less
// its identity. The encoder checks that every entry rebuilds its resource,
// and the record carries the digest of the JSON of the resources rebuilt
// from patches, which the decoder checks what it rebuilt against.

// stateEntry is one resource of a state in record format 3.
type stateEntry struct {
	ID string `json:"id"`
	// Patch makes the spec's resource of this ID into this resource (nil:
	// they are equal, identity aside).
	Patch map[string]any `json:"patch,omitempty"`
	// Whole is the resource itself, less its identity.
	Whole *engine.Resource `json:"whole,omitempty"`
}

// identityEntry is what names one live object for its whole life.
type identityEntry struct {
	ID      string `json:"id"`
	UID     string `json:"uid,omitempty"`
	Created string `json:"created,omitempty"`
}

// encodedState is a state as the chunks of record format 3 hold it: for each
// resource its entry's JSON in clear and as stored (sealed; nil when the same
// as clear), and the identity entries' JSON.
type encodedState struct {
	entryIDs      []string
	entries       [][]byte
	storedEntries [][]byte
	identityIDs   []string
	identities    [][]byte
	// digest is the hex sha256 of the rebuilt resources' JSON (digestEntry).
	digest string
}

// baseOf maps each resource ID of spec to its JSON object (objectOf); the
// first resource of an ID wins, on both sides.
func baseOf(spec *engine.Spec) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	if spec == nil {
		return out, nil
	}
	for _, r := range spec.Resources {
		if _, ok := out[r.ID]; ok {
			continue
		}
		m, err := objectOf(r)
		if err != nil {
			return nil, fmt.Errorf("encode spec: %w", err)
		}
		out[r.ID] = m
	}
	return out, nil
}

// objectOf is r's JSON as an object, its numbers as a chunk's decoder
// normalizes them (integral ones as int64), so that encoding it again gives
// the JSON a resource read back from a chunk encodes to. It is built from r's
// fields (engine.Normalize: the same tree as a JSON round trip gives) rather
// than by encoding r and decoding it again, which was most of what writing a
// release cost.
func objectOf(r engine.Resource) (map[string]any, error) {
	m := map[string]any{"id": r.ID, "type": string(r.Type)}
	if len(r.Attributes) > 0 {
		m["attributes"] = engine.Normalize(r.Attributes)
	}
	if len(r.DependsOn) > 0 {
		deps := make([]any, len(r.DependsOn))
		for i, d := range r.DependsOn {
			deps[i] = d
		}
		m["dependsOn"] = deps
	}
	if len(r.Extensions) > 0 {
		m["extensions"] = engine.Normalize(r.Extensions)
	}
	return m, nil
}

// resourceOf decodes a JSON object back into a resource as a chunk would.
func resourceOf(m map[string]any) (engine.Resource, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return engine.Resource{}, err
	}
	var r engine.Resource
	if err := decodeJSON(data, &r); err != nil {
		return engine.Resource{}, err
	}
	normalizeResource(&r)
	return r, nil
}

// resourceFromObject is the resource m's JSON decodes to, taken from m
// itself: its maps become the resource's (m is the decoder's to give away).
// Encoding m and decoding the JSON again cost a large state's decode much of
// its CPU and a second copy of every object.
func resourceFromObject(m map[string]any) (engine.Resource, error) {
	var r engine.Resource
	str := func(key string) (string, error) {
		switch v := m[key].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", fmt.Errorf("%s is a %T, not a string", key, v)
		}
	}
	obj := func(key string) (map[string]any, error) {
		switch v := m[key].(type) {
		case nil:
			return nil, nil
		case map[string]any:
			return v, nil
		default:
			return nil, fmt.Errorf("%s is a %T, not an object", key, v)
		}
	}
	id, err := str("id")
	if err != nil {
		return r, err
	}
	typ, err := str("type")
	if err != nil {
		return r, err
	}
	r.ID, r.Type = id, engine.Type(typ)
	if r.Attributes, err = obj("attributes"); err != nil {
		return r, err
	}
	if r.Extensions, err = obj("extensions"); err != nil {
		return r, err
	}
	switch deps := m["dependsOn"].(type) {
	case nil:
	case []any:
		r.DependsOn = make([]string, len(deps))
		for i, d := range deps {
			s, ok := d.(string)
			if !ok {
				return r, fmt.Errorf("dependsOn[%d] is a %T, not a string", i, d)
			}
			r.DependsOn[i] = s
		}
	default:
		return r, fmt.Errorf("dependsOn is a %T, not an array", deps)
	}
	return r, nil
}

// takeIdentity removes r's identity fields from its object m and returns them.
func takeIdentity(id string, m map[string]any) (identityEntry, bool) {
	e := identityEntry{ID: id}
	attrs, _ := m["attributes"].(map[string]any)
	md, _ := attrs["metadata"].(map[string]any)
	if md == nil {
		return e, false
	}
	md = maps.Clone(md)
	if uid, ok := md["uid"].(string); ok && uid != "" {
		e.UID = uid
		delete(md, "uid")
	}
	if c, ok := md["creationTimestamp"].(string); ok && c != "" {
		e.Created = c
		delete(md, "creationTimestamp")
	}
	if e.UID == "" && e.Created == "" {
		return e, false
	}
	attrs = maps.Clone(attrs)
	attrs["metadata"] = md
	m["attributes"] = attrs
	return e, true
}

// putIdentity puts e back into the object m.
func putIdentity(m map[string]any, e identityEntry) error {
	attrs, _ := m["attributes"].(map[string]any)
	md, _ := attrs["metadata"].(map[string]any)
	if md == nil {
		return fmt.Errorf("%s: the state records an identity for a resource without metadata", e.ID)
	}
	md, attrs = maps.Clone(md), maps.Clone(attrs)
	if e.UID != "" {
		md["uid"] = e.UID
	}
	if e.Created != "" {
		md["creationTimestamp"] = e.Created
	}
	attrs["metadata"] = md
	m["attributes"] = attrs
	return nil
}

// mergeDiff returns the JSON merge patch that makes a into b.
func mergeDiff(a, b map[string]any) map[string]any {
	p := map[string]any{}
	for k, bv := range b {
		av, ok := a[k]
		if !ok {
			p[k] = bv
			continue
		}
		am, aObj := av.(map[string]any)
		bm, bObj := bv.(map[string]any)
		switch {
		case aObj && bObj:
			if sub := mergeDiff(am, bm); len(sub) > 0 {
				p[k] = sub
			}
		case !jsonEqual(av, bv):
			p[k] = bv
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			p[k] = nil
		}
	}
	return p
}

// jsonEqual is reflect.DeepEqual for the trees objectOf makes (maps,
// slices, strings, numbers, booleans, nil), without reflection for them:
// comparing every resource of a state with its rebuilt self went through
// reflection for each value and cost a quarter of encoding the state.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// mergeApply returns target with the merge patch p applied (RFC 7386);
// target is not changed, and subtrees p does not touch are shared.
func mergeApply(target any, p map[string]any) map[string]any {
	t, _ := target.(map[string]any)
	out := maps.Clone(t)
	if out == nil {
		out = map[string]any{}
	}
	for k, pv := range p {
		switch v := pv.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			out[k] = mergeApply(out[k], v)
		default:
			out[k] = pv
		}
	}
	return out
}

// encodeState encodes the state rs against spec; sensitive says whether a
// resource holds values to seal, and seal seals one (both nil without a
// sealer; seal may be called from several goroutines at once). The resources
// are encoded side by side (sideBySide), then gathered and digested in order.
func encodeState(spec *engine.Spec, rs []engine.Resource, sensitive func(engine.Resource) bool, seal func(engine.Resource) (engine.Resource, error)) (*encodedState, error) {
	base, err := baseOf(spec)
	if err != nil {
		return nil, err
	}
	encoded, err := sideBySide(len(rs), func(tree *treeWriter, i int) (encodedResource, error) {
		return encodeResource(tree, base, rs[i], sensitive, seal)
	})
	if err != nil {
		return nil, err
	}
	out := &encodedState{
		entryIDs: make([]string, len(rs)), entries: make([][]byte, len(rs)), storedEntries: make([][]byte, len(rs)),
	}
	h := sha256.New()
	for i, e := range encoded {
		if e.identity != nil {
			out.identityIDs, out.identities = append(out.identityIDs, rs[i].ID), append(out.identities, e.identity)
		}
		digestEntry(h, i, e.patched != nil, e.patched)
		out.entryIDs[i], out.entries[i], out.storedEntries[i] = rs[i].ID, e.entry, e.stored
	}
	out.digest = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// encodedResource is one resource of a state encoded (encodeResource).
type encodedResource struct {
	// identity is its identity entry's JSON; nil: it has none.
	identity []byte
	// entry is its entry's JSON in clear; stored, when not nil, the entry as
	// stored (sensitive values sealed).
	entry, stored []byte
	// patched is the resource's JSON when its entry is a patch of the spec's
	// (what the digest covers); nil when the entry holds it whole.
	patched []byte
}

// encodeResource encodes r against base (baseOf the spec), using tree.
func encodeResource(tree *treeWriter, base map[string]map[string]any, r engine.Resource, sensitive func(engine.Resource) bool, seal func(engine.Resource) (engine.Resource, error)) (encodedResource, error) {
	var out encodedResource
	m, err := objectOf(r)
	if err != nil {
		return out, err
	}
	whole, err := tree.encode(m)
	if err != nil {
		return out, fmt.Errorf("%s: encode: %w", r.ID, err)
	}
	ident, hasIdent := takeIdentity(r.ID, m)
	e := stateEntry{ID: r.ID}
	b, ok := base[r.ID]
	if ok && (sensitive == nil || !sensitive(r)) {
		e.Patch = mergeDiff(b, m)
		if !jsonEqual(mergeApply(b, e.Patch), m) {
			ok = false // a null in the resource: merge patches cannot carry one
		}
	} else {
		ok = false
	}
	if ok {
		out.patched = bytes.Clone(whole) // tree's buffer, which the entry is written to next
		entry, err := tree.entry(r.ID, e.Patch)
		if err != nil {
			return out, fmt.Errorf("%s: encode: %w", r.ID, err)
		}
		out.entry = bytes.Clone(entry)
	} else {
		w, err := resourceOf(m)
		if err != nil {
			return out, fmt.Errorf("%s: %w", r.ID, err)
		}
		e.Patch, e.Whole = nil, &w
		if sensitive != nil && sensitive(w) {
			sealed, err := seal(w)
			if err != nil {
				return out, fmt.Errorf("%s: encrypt sensitive values: %w", r.ID, err)
			}
			if out.stored, err = json.Marshal(stateEntry{ID: r.ID, Whole: &sealed}); err != nil {
				return out, fmt.Errorf("%s: encode: %w", r.ID, err)
			}
		}
		if out.entry, err = json.Marshal(e); err != nil {
			return out, fmt.Errorf("%s: encode: %w", r.ID, err)
		}
	}
	if hasIdent {
		b, err := tree.identity(ident)
		if err != nil {
			return out, fmt.Errorf("%s: encode: %w", r.ID, err)
		}
		out.identity = bytes.Clone(b)
	}
	return out, nil
}

// digestEntry adds the i-th resource of a state to its digest: its JSON when
// it is rebuilt from a patch, a placeholder when its entry holds it whole
// (nothing is rebuilt; and with a sealer those are the resources holding
// secrets, which a digest kept in clear must not cover).
func digestEntry(h hash.Hash, i int, patched bool, data []byte) {
	if i > 0 {
		h.Write([]byte{','})
	}
	if patched {
		h.Write(data)
	} else {
		h.Write([]byte("null"))
	}
}

// decodeState rebuilds a state from its entries (sealed values already
// opened) and identities against spec, and checks it against digest.
func decodeState(spec *engine.Spec, entries []stateEntry, identities []identityEntry, digest string) ([]engine.Resource, error) {
	base, err := baseOf(spec)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]identityEntry, len(identities))
	for _, e := range identities {
		if _, dup := ids[e.ID]; dup {
			return nil, fmt.Errorf("%s: two identities recorded", e.ID)
		}
		ids[e.ID] = e
	}
	// The resources are rebuilt side by side, then digested in order.
	rebuilt, err := sideBySide(len(entries), func(tree *treeWriter, i int) (rebuiltResource, error) {
		return rebuildResource(tree, base, ids, entries[i])
	})
	if err != nil {
		return nil, err
	}
	var rs []engine.Resource
	if entries != nil {
		rs = make([]engine.Resource, 0, len(entries))
	}
	h := sha256.New()
	used := 0
	for i, r := range rebuilt {
		if r.identified {
			used++
		}
		digestEntry(h, i, r.patched != nil, r.patched)
		rs = append(rs, r.resource)
	}
	if used != len(ids) {
		return nil, fmt.Errorf("the state records %d identities, and %d of them name none of its resources", len(ids), len(ids)-used)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !bytes.Equal([]byte(got), []byte(digest)) {
		return nil, fmt.Errorf("the state rebuilt from its entries and spec differs from the one written (sha256 %s, recorded %s)", got, digest)
	}
	return rs, nil
}

// rebuiltResource is one resource of a state rebuilt (rebuildResource).
type rebuiltResource struct {
	resource engine.Resource
	// identified: an identity entry was put back into it.
	identified bool
	// patched is its JSON when its entry is a patch (what the digest
	// covers); nil when the entry held it whole.
	patched []byte
}

// rebuildResource rebuilds the resource of entry e against base (baseOf the
// spec) and the identities ids, using tree.
func rebuildResource(tree *treeWriter, base map[string]map[string]any, ids map[string]identityEntry, e stateEntry) (rebuiltResource, error) {
	var out rebuiltResource
	var m map[string]any
	switch {
	case e.Whole != nil && e.Patch != nil:
		return out, fmt.Errorf("%s: the state entry holds both a patch and the whole resource", e.ID)
	case e.Whole != nil:
		var err error
		if m, err = objectOf(*e.Whole); err != nil {
			return out, err
		}
	default:
		b, ok := base[e.ID]
		if !ok {
			return out, fmt.Errorf("%s: the state entry patches the spec's resource of that ID, and the spec has none", e.ID)
		}
		m = mergeApply(b, e.Patch)
	}
	if ident, ok := ids[e.ID]; ok {
		if err := putIdentity(m, ident); err != nil {
			return out, err
		}
		out.identified = true
	}
	data, err := tree.encode(m)
	if err != nil {
		return out, fmt.Errorf("%s: encode: %w", e.ID, err)
	}
	if e.Whole == nil {
		out.patched = bytes.Clone(data)
	}
	r, err := resourceFromObject(m)
	if err != nil {
		return out, fmt.Errorf("%s: decode: %w", e.ID, err)
	}
	if r.ID != e.ID {
		return out, fmt.Errorf("%s: the state entry rebuilds a resource of ID %q", e.ID, r.ID)
	}
	normalizeResource(&r)
	out.resource = r
	return out, nil
}
