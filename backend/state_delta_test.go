package backend

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

func configMap(name, value string) engine.Resource {
	return engine.Resource{ID: "v1:ConfigMap:demo:" + name, Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "demo", "labels": map[string]any{"app": "web"}},
		"data":     map[string]any{"value": value},
	}}
}

// live is r as an apiserver returns it: identity, a resourceVersion, a
// defaulted field, a label removed.
func live(r engine.Resource, uid string, rv int) engine.Resource {
	out := r
	b, _ := json.Marshal(r.Attributes)
	var attrs map[string]any
	_ = json.Unmarshal(b, &attrs)
	md := attrs["metadata"].(map[string]any)
	md["uid"], md["resourceVersion"], md["creationTimestamp"] = uid, fmt.Sprint(rv), "2026-11-26T01:00:00Z"
	delete(md, "labels")
	attrs["immutable"] = false
	out.Attributes = engine.Normalize(attrs).(map[string]any)
	return out
}

func roundTrip(t *testing.T, spec *engine.Spec, rs []engine.Resource) (*encodedState, []engine.Resource) {
	t.Helper()
	enc, err := encodeState(spec, rs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, ids := entriesOf(t, enc)
	got, err := decodeState(spec, entries, ids, enc.digest)
	if err != nil {
		t.Fatal(err)
	}
	return enc, got
}

// entriesOf decodes the entries and identities of enc as a chunk's reader does.
func entriesOf(t *testing.T, enc *encodedState) ([]stateEntry, []identityEntry) {
	t.Helper()
	var entries []stateEntry
	if err := decodeJSON(joinJSON(enc.entries), &entries); err != nil {
		t.Fatal(err)
	}
	var ids []identityEntry
	if err := decodeJSON(joinJSON(enc.identities), &ids); err != nil {
		t.Fatal(err)
	}
	return entries, ids
}

func TestStateAgainstSpecRoundTrips(t *testing.T) {
	a, b := configMap("a", "1"), configMap("b", "2")
	withNull := live(configMap("n", "3"), "uid-n", 9)
	withNull.Attributes["spec"] = map[string]any{"selector": nil}
	tf := engine.Resource{ID: "hashicorp:local:local_file:f", Type: engine.Terraform,
		Attributes: map[string]any{"filename": "/tmp/f", "n": int64(9007199254740993), "f": 1.5}}
	spec := &engine.Spec{Resources: []engine.Resource{a, b, configMap("n", "3"), tf}}
	state := []engine.Resource{
		live(a, "uid-a", 10),
		live(b, "uid-b", 11),
		withNull,                               // a null: whole
		live(configMap("x", "4"), "uid-x", 12), // not in the spec: whole
		tf,                                     // equal to the spec's: an empty patch
	}
	enc, got := roundTrip(t, spec, state)
	if !reflect.DeepEqual(got, state) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(state)
		t.Fatalf("state read back differs:\n got  %s\n want %s", gj, wj)
	}
	kinds := make([]string, len(enc.entries))
	for i, e := range enc.entries {
		var se stateEntry
		if err := json.Unmarshal(e, &se); err != nil {
			t.Fatal(err)
		}
		switch {
		case se.Whole != nil:
			kinds[i] = "whole"
		case se.Patch != nil:
			kinds[i] = "patch"
		default:
			kinds[i] = "same"
		}
	}
	if want := []string{"patch", "patch", "whole", "whole", "same"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("entries %v, want %v", kinds, want)
	}
	if len(enc.identities) != 4 {
		t.Errorf("%d identities, want 4 (the Terraform resource has none)", len(enc.identities))
	}
	for _, e := range enc.entries {
		if strings.Contains(string(e), "uid-") {
			t.Errorf("an entry holds a uid: %s", e)
		}
	}
	// The patch of a is what the apiserver changed, nothing of what kumo sent.
	if !strings.Contains(string(enc.entries[0]), `"resourceVersion":"10"`) || strings.Contains(string(enc.entries[0]), `"value"`) {
		t.Errorf("patch of a: %s", enc.entries[0])
	}
}

func TestStateAgainstSpecChecksWhatItRebuilds(t *testing.T) {
	a := configMap("a", "1")
	spec := &engine.Spec{Resources: []engine.Resource{a}}
	enc, err := encodeState(spec, []engine.Resource{live(a, "uid-a", 10)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, ids := entriesOf(t, enc)
	other := &engine.Spec{Resources: []engine.Resource{configMap("a", "changed")}}
	if _, err := decodeState(other, entries, ids, enc.digest); err == nil || !strings.Contains(err.Error(), "differs from the one written") {
		t.Errorf("against another spec: %v, want the digest refusal", err)
	}
	if _, err := decodeState(&engine.Spec{}, entries, ids, enc.digest); err == nil || !strings.Contains(err.Error(), "v1:ConfigMap:demo:a") {
		t.Errorf("against a spec without the resource: %v, want an error naming it", err)
	}
	stray := append(ids, identityEntry{ID: "v1:ConfigMap:demo:gone", UID: "u"})
	if _, err := decodeState(spec, entries, stray, enc.digest); err == nil || !strings.Contains(err.Error(), "name none of its resources") {
		t.Errorf("a stray identity: %v", err)
	}
	both := []stateEntry{{ID: a.ID, Patch: map[string]any{"x": "y"}, Whole: &a}}
	if _, err := decodeState(spec, both, nil, enc.digest); err == nil || !strings.Contains(err.Error(), "both a patch and the whole") {
		t.Errorf("an entry with both: %v", err)
	}
}

func TestSealedStateKeepsSensitiveResourcesWhole(t *testing.T) {
	secret := engine.Resource{ID: "v1:Secret:demo:db", Type: engine.Kubernetes, Attributes: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "demo"},
		"data": map[string]any{"password": "clear-value"}}}
	spec := &engine.Spec{Resources: []engine.Resource{secret}}
	sealed := func(r engine.Resource) (engine.Resource, error) {
		r.Attributes = map[string]any{"sealed": "yes"}
		return r, nil
	}
	enc, err := encodeState(spec, []engine.Resource{live(secret, "uid-s", 3)}, hasSensitive, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if enc.storedEntries[0] == nil || strings.Contains(string(enc.storedEntries[0]), "clear-value") || !strings.Contains(string(enc.storedEntries[0]), `"sealed"`) {
		t.Errorf("stored entry of a Secret: %s", enc.storedEntries[0])
	}
}

// TestResourceFromObjectIsTheJSONDecode: a rebuilt object becomes the resource
// its JSON decodes to, numbers normalized, and one a decode refuses is refused.
func TestResourceFromObjectIsTheJSONDecode(t *testing.T) {
	objects := []string{
		`{"id":"v1:ConfigMap:ns:a","type":"Kubernetes","attributes":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v"},"n":3,"f":1.5,"big":12345678901234,"list":[1,"two",{"three":3.0}],"none":null}}`,
		`{"id":"aws:aws:aws_s3_bucket:b","type":"Terraform","attributes":{"bucket":"b","tags":{}},"dependsOn":["v1:Namespace:ns"],"extensions":{"provider":{"region":"eu-west-1"},"n":2}}`,
		`{"id":"x","type":"Kubernetes","dependsOn":[]}`,
		`{"id":"x","attributes":null,"extensions":null,"dependsOn":null,"unknown":{"a":1}}`,
		`{}`,
	}
	for _, o := range objects {
		var m map[string]any
		if err := decodeJSON([]byte(o), &m); err != nil {
			t.Fatal(err)
		}
		var want engine.Resource
		if err := decodeJSON([]byte(o), &want); err != nil {
			t.Fatal(err)
		}
		normalizeResource(&want)
		got, err := resourceFromObject(m)
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		normalizeResource(&got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", o, got, want)
		}
	}
	for _, o := range []string{`{"id":3}`, `{"type":["x"]}`, `{"attributes":"a"}`, `{"extensions":[1]}`, `{"dependsOn":"a"}`, `{"dependsOn":[1]}`} {
		var m map[string]any
		if err := decodeJSON([]byte(o), &m); err != nil {
			t.Fatal(err)
		}
		var r engine.Resource
		if decodeJSON([]byte(o), &r) == nil {
			t.Fatalf("%s: the JSON decode takes it", o)
		}
		if _, err := resourceFromObject(m); err == nil {
			t.Errorf("%s: taken, want refused as the JSON decode refuses it", o)
		}
	}
}

// TestObjectOfIsTheJSONRoundTrip: a resource's object is the tree its JSON
// decodes to (numbers normalized), whatever Go types its values have.
func TestObjectOfIsTheJSONRoundTrip(t *testing.T) {
	type port struct {
		Name string `json:"name"`
		Port int32  `json:"port,omitempty"`
	}
	for _, r := range []engine.Resource{
		{ID: "v1:ConfigMap:ns:a", Type: engine.Kubernetes, Attributes: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "labels": map[string]string{"x": "<&>"}},
			"data": map[string]any{"k": "v", "empty": ""}, "n": 3, "i32": int32(-7), "u": uint16(9), "f": 1.5, "f32": float32(0.25), "whole": 2.0, "big": 1e21,
			"num": json.Number("12"), "list": []any{1, "two", map[string]any{"three": 3.0}, nil}, "strs": []string{"a", "b"},
			"none": nil, "emptyMap": map[string]any{}, "emptyList": []any{}, "ports": []port{{Name: "http", Port: 80}, {Name: "x"}},
			"ptr": new(int), "nilPtr": (*int)(nil), "bytes": []byte("hi")}},
		{ID: "x", Type: engine.Terraform, DependsOn: []string{"a", "b"}, Extensions: map[string]any{"kubeConfig": "/k", "n": int64(1)}},
		{ID: "empty", Attributes: map[string]any{}, DependsOn: []string{}, Extensions: map[string]any{}},
		{},
	} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := decodeJSON(data, &want); err != nil {
			t.Fatal(err)
		}
		want = engine.NormalizeDecoded(want).(map[string]any)
		got, err := objectOf(r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", r.ID, got, want)
		}
	}
}

// TestJSONEqualIsDeepEqual: jsonEqual answers as reflect.DeepEqual does for
// the trees a state is encoded from, where they differ only in a nil or a
// type as much as in a value.
func TestJSONEqualIsDeepEqual(t *testing.T) {
	values := []any{
		nil, "", "a", "b", int64(0), int64(1), 1.0, 1.5, true, false,
		map[string]any(nil), map[string]any{}, map[string]any{"a": int64(1)}, map[string]any{"a": 1.0},
		map[string]any{"a": int64(1), "b": nil}, map[string]any{"a": int64(1), "c": nil}, map[string]any{"a": map[string]any{"b": []any{}}},
		[]any(nil), []any{}, []any{"a"}, []any{"a", nil}, []any{nil, "a"}, []any{map[string]any{}}, []any{map[string]any(nil)},
		[]string{"a"}, map[string]string{"a": "b"}, 1,
	}
	for _, a := range values {
		for _, b := range values {
			if got, want := jsonEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("jsonEqual(%#v, %#v) = %v, reflect.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}
