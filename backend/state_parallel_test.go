package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// mixedState is a spec and a state of n resources cycling through every
// kind of entry: patched, whole for a null, whole for want of a base, the
// same as the spec's, and (with a sealer) sealed whole.
func mixedState(n int) (*engine.Spec, []engine.Resource) {
	spec := &engine.Spec{}
	state := make([]engine.Resource, n)
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		r := configMap(name, fmt.Sprint(i))
		switch i % 5 {
		case 0:
			spec.Resources = append(spec.Resources, r)
			state[i] = live(r, "uid-"+name, i)
		case 1:
			spec.Resources = append(spec.Resources, r)
			state[i] = live(r, "uid-"+name, i)
			state[i].Attributes["spec"] = map[string]any{"selector": nil}
		case 2:
			state[i] = live(r, "uid-"+name, i)
		case 3:
			spec.Resources = append(spec.Resources, r)
			state[i] = r
		case 4:
			s := engine.Resource{ID: "v1:Secret:demo:" + name, Type: engine.Kubernetes, Attributes: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": "demo"},
				"data": map[string]any{"password": "p-" + name}}}
			spec.Resources = append(spec.Resources, s)
			state[i] = live(s, "uid-"+name, i)
		}
	}
	return spec, state
}

// withProcs runs f with GOMAXPROCS at n.
func withProcs(t *testing.T, n int, f func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

func sealedForTest(r engine.Resource) (engine.Resource, error) {
	r.Attributes = map[string]any{"sealed": r.ID}
	return r, nil
}

func TestStateEncodedSideBySideIsTheSameAsOneByOne(t *testing.T) {
	spec, state := mixedState(1000)
	var alone, side *encodedState
	var err error
	withProcs(t, 1, func() { alone, err = encodeState(spec, state, hasSensitive, sealedForTest) })
	if err != nil {
		t.Fatal(err)
	}
	withProcs(t, 4, func() { side, err = encodeState(spec, state, hasSensitive, sealedForTest) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(side, alone) {
		t.Fatal("the state encoded side by side differs from the state encoded one resource after another")
	}
	if len(side.entries) != 1000 || len(side.identities) != 800 {
		t.Fatalf("%d entries and %d identities, want 1000 and 800", len(side.entries), len(side.identities))
	}
	spec, state = mixedState(1000)
	for i := range state {
		if i%5 == 4 {
			state[i] = live(configMap(fmt.Sprintf("cm-%04d", i), "x"), "uid", i) // no Secrets: the round trip needs no sealer
		}
	}
	withProcs(t, 4, func() {
		if _, got := roundTrip(t, spec, state); !reflect.DeepEqual(got, state) {
			t.Error("a state encoded side by side reads back different")
		}
	})
}

func TestStateEncodingFailsAtItsFirstResourceWhicheverGoroutineFailsFirst(t *testing.T) {
	spec, state := mixedState(1000)
	refuse := func(r engine.Resource) (engine.Resource, error) {
		if strings.HasSuffix(r.ID, "cm-0004") {
			// The lowest failure is held back until later ones are done.
			for range 100 {
				runtime.Gosched()
			}
		}
		return engine.Resource{}, errors.New("no key")
	}
	withProcs(t, 4, func() {
		_, err := encodeState(spec, state, hasSensitive, refuse)
		if err == nil || !strings.Contains(err.Error(), "v1:Secret:demo:cm-0004:") {
			t.Errorf("error %v, want the first Secret's (cm-0004)", err)
		}
	})
}

func TestStateEntriesWrittenAsEncodingJSONWritesThem(t *testing.T) {
	patches := []map[string]any{
		nil,
		{},
		{"metadata": map[string]any{"resourceVersion": "12", "labels": nil}},
		{"data": map[string]any{"<html>&": "a\u2028b\"c\\", "ünï": "çødé", "n": int64(-3), "f": 1.5, "t": true}},
		{"spec": map[string]any{"list": []any{int64(1), "two", nil, map[string]any{"z": "", "a": []any{}}}}},
	}
	var tree treeWriter
	for _, id := range []string{"v1:ConfigMap:demo:a", "x:\"quoted\"<id>"} {
		for _, p := range patches {
			got, err := tree.entry(id, p)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(stateEntry{ID: id, Patch: p})
			if string(got) != string(want) {
				t.Errorf("entry of %q with %v:\n got  %s\n want %s", id, p, got, want)
			}
		}
		for _, e := range []identityEntry{{ID: id}, {ID: id, UID: "u-1"}, {ID: id, Created: "2026-11-27T00:00:00Z"}, {ID: id, UID: "<u>", Created: "c"}} {
			got, err := tree.identity(e)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(e)
			if string(got) != string(want) {
				t.Errorf("identity %+v:\n got  %s\n want %s", e, got, want)
			}
		}
	}
}

func TestStateDecodingFailsAtItsFirstResource(t *testing.T) {
	spec, state := mixedState(1000)
	for i := range state {
		if i%5 == 4 {
			state[i] = live(configMap(fmt.Sprintf("cm-%04d", i), "x"), "uid", i)
		}
	}
	enc, err := encodeState(spec, state, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, ids := entriesOf(t, enc)
	// Without the spec's first resource and one far later, the patches of
	// both have no base: the error names the first.
	short := &engine.Spec{Resources: spec.Resources[1:700]}
	withProcs(t, 4, func() {
		_, err := decodeState(short, entries, ids, enc.digest)
		if err == nil || !strings.HasPrefix(err.Error(), "v1:ConfigMap:demo:cm-0000:") {
			t.Errorf("error %v, want the first resource's (cm-0000)", err)
		}
	})
}
