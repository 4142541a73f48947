package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkExternalGeneratorOverhead compares running the example redis generator
// directly (exec, request on stdin, response read) with a Generate of one app
// whose only accessory uses it: the difference is what kumo adds per external
// call (request building, response parsing, merging).
func BenchmarkExternalGeneratorOverhead(b *testing.B) {
	dir := b.TempDir()
	gen := filepath.Join(dir, "redis")
	if out, err := exec.Command("go", "build", "-o", gen, "../../examples/generators/redis").CombinedOutput(); err != nil {
		b.Fatalf("build the example generator: %v\n%s", err, out)
	}
	stack := writeBenchProject(b, dir, gen)
	src, err := Load(stack)
	if err != nil {
		b.Fatal(err)
	}
	req, err := json.Marshal(Request{Name: "shop-dev-web", Namespace: "shop", Accessory: AccessoryRequest{Name: "cache"}})
	if err != nil {
		b.Fatal(err)
	}

	b.Run("exec-only", func(b *testing.B) {
		for range b.N {
			cmd := exec.Command(gen)
			cmd.Stdin = bytes.NewReader(req)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil || out.Len() == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("generate", func(b *testing.B) {
		for range b.N {
			if _, err := Generate(context.Background(), Input{Source: src, Runner: ExecRunner{Trust: trustEverything}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func writeBenchProject(b *testing.B, dir, gen string) string {
	files := map[string]string{
		"project.yaml":   "name: shop\ngenerators:\n  redis: {command: [" + gen + "]}\n",
		"dev/stack.yaml": "name: dev\n",
		"dev/app.yaml":   "apps: {web: {workload: {type: service, containers: {web: {image: nginx}}}, accessories: {cache: {module: redis}}}}\n",
	}
	for path, content := range files {
		full := filepath.Join(dir, path)
		if err := mkdirWrite(full, content); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "dev")
}

func mkdirWrite(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
