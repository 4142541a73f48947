package backend

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/kumoproj/kumo/engine"
)

// TestLargeRecordsAreWrittenAsJSON: a record over largeRecord is written in
// YAML's JSON form and reads back the same as a small one in block style,
// numbers keeping their Go types.
func TestLargeRecordsAreWrittenAsJSON(t *testing.T) {
	for _, n := range []int{3, 20000} {
		in := engine.Spec{}
		for i := range n {
			in.Resources = append(in.Resources, engine.Resource{ID: fmt.Sprintf("v1:ConfigMap:ns:cm-%d", i), Type: engine.Kubernetes,
				Attributes: map[string]any{"data": map[string]any{"n": int64(i), "f": 1.5, "s": "x"}}})
		}
		data, err := encodeYAML(in)
		if err != nil {
			t.Fatal(err)
		}
		if json := bytes.HasPrefix(data, []byte("{")); json != (n > 3) {
			t.Fatalf("%d resources (%d bytes): written as JSON %v", n, len(data), json)
		}
		var out engine.Spec
		if err := decodeYAML(data, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out, in) {
			t.Fatalf("%d resources: read back differently (first %#v, want %#v)", n, out.Resources[0], in.Resources[0])
		}
	}
}
