package terraform_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/runtime/runtimetest"
)

// TestConformance runs the runtime conformance suite against terraform with the
// local provider from the offline mirror: a local_file is the resource, the file
// itself is the live object. A transient failure is a provider whose API
// refuses connections (the kumotest provider told to fail so), a slow apply a
// kumotest object that takes minutes to create.
func TestConformance(t *testing.T) {
	rt, _ := newRuntime(t)
	dir := t.TempDir()
	file := func(name, content string) *engine.Resource {
		return localFile(name, filepath.Join(dir, name+".txt"), content)
	}
	runtimetest.Run(t, runtimetest.Harness{
		Runtime: rt,
		Record:  recorded,
		Fixture: func(_ testing.TB, name string) runtimetest.Fixture {
			return runtimetest.Fixture{Create: file(name, "hello"), Update: file(name, "bye"), Field: "content"}
		},
		Observe: func(t testing.TB, res *engine.Resource) runtimetest.Observed {
			path := res.Attributes["filename"].(string)
			info, err := os.Stat(path)
			if errors.Is(err, fs.ErrNotExist) {
				return runtimetest.Observed{}
			}
			b, err2 := os.ReadFile(path)
			if err != nil || err2 != nil {
				t.Fatalf("observe %s: %v %v", res.ID, err, err2)
			}
			// A rewrite changes the modification time, a replacement the inode.
			version := fmt.Sprint(info.ModTime().UnixNano())
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				version += fmt.Sprintf("/%d", st.Ino)
			}
			return runtimetest.Observed{Exists: true, Value: string(b), Version: version}
		},
		Invalid: func(_ testing.TB, name string) []*engine.Resource {
			unknownArg := file(name+"-arg", "x")
			unknownArg.Attributes["colour"] = "red"
			noFilename := file(name+"-required", "x")
			delete(noFilename.Attributes, "filename")
			unknownType := file(name+"-type", "x")
			unknownType.ID = engine.TerraformID("hashicorp", "local", "local_nothing", name)
			unknownType.Extensions[engine.ExtResourceType] = "local_nothing"
			return []*engine.Resource{unknownArg, noFilename, unknownType}
		},
		Slow: func(_ testing.TB, name string) runtimetest.Slow {
			objects := filepath.Join(dir, name)
			return runtimetest.Slow{Runtime: rt, Resource: object(name, objects, map[string]any{"content": "x", "delay": "10m"}),
				Started: func() bool {
					pending, _ := filepath.Glob(filepath.Join(objects, "*.pending"))
					return len(pending) > 0
				}}
		},
		Transient: func(_ testing.TB, name string) runtimetest.Transient {
			objects := filepath.Join(dir, name)
			failing := object(name, objects, map[string]any{"content": "x",
				"fail": "Post \"https://api.example.com/v1/objects\": dial tcp 127.0.0.1:1: connect: connection refused"})
			return runtimetest.Transient{Runtime: rt, Failing: failing, Retry: object(name, objects, map[string]any{"content": "x"})}
		},
	})
}
