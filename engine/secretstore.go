package engine

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// KusionSecretRefPrefix starts a Kusion secret-store reference,
// "ref://name/property?version=v": a v1 Secret value that the worker replaces,
// at apply time, with the value it reads from the secret store its workspace
// configures (see ResolveSecretStore). Kusion writes it base64-encoded in
// data, as a Secret's data always is; kumo also takes it as written in
// stringData, and unencoded in data (never valid base64: it holds a colon).
const KusionSecretRefPrefix = "ref://"

// SecretRef is a parsed reference, as Kusion parses it: "ref://a/b/c" reads
// the secret named "a/b" and its property "c"; "ref://a" the whole secret "a".
type SecretRef struct {
	Name     string
	Property string
	Version  string
}

func (r SecretRef) String() string {
	s := KusionSecretRefPrefix + r.Name
	if r.Property != "" {
		s += "/" + r.Property
	}
	if r.Version != "" {
		s += "?version=" + r.Version
	}
	return s
}

// ParseSecretRef parses a reference the way Kusion does (the host and all but
// the last path segment are the secret's name, the last segment its
// property, the version query parameter its version), and refuses what a
// store could read somewhere else than the name says: empty, "." or ".."
// segments, and any other query parameter or a fragment.
func ParseSecretRef(s string) (SecretRef, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme != "ref" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return SecretRef{}, fmt.Errorf("not a reference of the form %sname/property", KusionSecretRefPrefix)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return SecretRef{}, errors.New("a reference has no #fragment")
	}
	var ref SecretRef
	for k, vs := range u.Query() {
		if k != "version" || len(vs) != 1 || vs[0] == "" {
			return SecretRef{}, fmt.Errorf("query %q: a reference takes one non-empty version=... and nothing else", k)
		}
		ref.Version = vs[0]
	}
	segments := []string{u.Host}
	if u.Path != "" {
		segments = append(segments, strings.Split(strings.TrimPrefix(u.Path, "/"), "/")...)
	}
	for _, seg := range segments {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") {
			return SecretRef{}, fmt.Errorf("segment %q: a reference's name and property are non-empty segments, never \".\" or \"..\"", seg)
		}
	}
	if len(segments) == 1 {
		ref.Name = segments[0]
	} else {
		ref.Name = strings.Join(segments[:len(segments)-1], "/")
		ref.Property = segments[len(segments)-1]
	}
	return ref, nil
}

// SecretRefField is one Secret value that is a reference: where it is
// (Field "data" or "stringData", Key) and what it reads.
type SecretRefField struct {
	Field, Key string
	Ref        SecretRef
}

// Path names the value in errors: "stringData.password".
func (f SecretRefField) Path() string { return f.Field + "." + f.Key }

// SecretRefsOf lists r's references (nil for anything but a v1 Secret), in a
// stable order; a value that starts like a reference but does not parse is an
// error naming the resource and field. Kusion resolves references only as
// whole values of a Secret's data, so a ConfigMap value or an annotation that
// merely contains "ref://" is ordinary text.
func SecretRefsOf(r *Resource) ([]SecretRefField, error) {
	if !IsSecret(r) {
		return nil, nil
	}
	var out []SecretRefField
	var errs []error
	for _, field := range []string{"data", "stringData"} {
		m, _ := r.Attributes[field].(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			text, ok := refText(field, m[k])
			if !ok {
				continue
			}
			ref, err := ParseSecretRef(text)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s.%s: %w", r.ID, field, k, err))
				continue
			}
			out = append(out, SecretRefField{Field: field, Key: k, Ref: ref})
		}
	}
	return out, errors.Join(errs...)
}

// refText is v as a reference's text, when it is one: in data, base64 of
// "ref://..." (how Kusion writes it) or the reference itself.
func refText(field string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	if strings.HasPrefix(strings.TrimSpace(s), KusionSecretRefPrefix) {
		return s, true
	}
	if field == "data" {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil && strings.HasPrefix(string(b), KusionSecretRefPrefix) {
			return string(b), true
		}
	}
	return "", false
}

// HasSecretRefs reports whether r holds any reference.
func HasSecretRefs(r *Resource) bool {
	refs, err := SecretRefsOf(r)
	return len(refs) > 0 || err != nil
}

// WithSecretValues returns r with each reference in refs replaced by its value
// (values[i] for refs[i]): base64-encoded in data, as written in stringData.
// r itself is not changed.
func WithSecretValues(r Resource, refs []SecretRefField, values [][]byte) Resource {
	attrs := maps.Clone(r.Attributes)
	cloned := map[string]map[string]any{}
	for i, f := range refs {
		m, ok := cloned[f.Field]
		if !ok {
			orig, _ := attrs[f.Field].(map[string]any)
			m = maps.Clone(orig)
			if m == nil {
				m = map[string]any{}
			}
			cloned[f.Field] = m
			attrs[f.Field] = m
		}
		if f.Field == "data" {
			m[f.Key] = base64.StdEncoding.EncodeToString(values[i])
		} else {
			m[f.Key] = string(values[i])
		}
	}
	r.Attributes = attrs
	return r
}

// SecretStoreRefs checks s's references: each parses, and when there are any,
// a secretStore the spec names is one kumo reads (the workspace's store is
// used when it names none). One error per problem, naming the resource and
// field; the reference's text is not repeated. A spec without references
// keeps its secretStore as data: Kusion copies the workspace's into every
// spec it generates.
func (s *Spec) SecretStoreRefs() []error {
	var errs []error
	found := false
	for i := range s.Resources {
		refs, err := SecretRefsOf(&s.Resources[i])
		if err != nil {
			errs = append(errs, unjoin(err)...)
		}
		found = found || len(refs) > 0
	}
	if found && s.SecretStore != nil {
		if _, err := ParseSecretStore(s.SecretStore, "secretStore"); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
