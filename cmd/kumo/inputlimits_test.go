package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputThroughTheCLI: kumo apply -f (a file, or standard input), spec
// convert and workspace create refuse each bad input with an error naming the
// file and the line and column, and record nothing: no release, no workspace.
func TestBadInputThroughTheCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	laughs := "resources:\n- id: v1:ConfigMap:default:lol\n  type: Kubernetes\n  attributes:\n    a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		prev := string(rune('a' + i))
		laughs += fmt.Sprintf("    %s: &%s [%s*%s]\n", n, n, strings.Repeat("*"+prev+", ", 8), prev)
	}
	configMap := func(value string) string {
		return fmt.Sprintf("resources:\n- id: v1:ConfigMap:%[1]s:x\n  type: Kubernetes\n  attributes:\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: x, namespace: %[1]s}\n    data: {k: %[2]s}\n", e.ns, value)
	}
	cases := []struct{ name, data, want string }{
		{"billion laughs", laughs, "line 11, column 16: alias *f expands the document to more than the input size limit of 8 MiB"},
		{"deep", configMap(strings.Repeat("[", 1200) + strings.Repeat("]", 1200)), "line 8, column 1011: values nest more than 1000 levels deep"},
		{"not utf-8", configMap("\"caf\xe9\""), "line 8, column 19: byte 0xe9 is not UTF-8"},
		{"nan", configMap(".nan"), "line 8, column 15: .nan is not a number JSON can hold"},
		{"huge number", configMap("1e400"), "line 8, column 15: number 1e400 is out of the range of a 64-bit float"},
		{"huge integer", configMap("123456789012345678901234567890"), "line 8, column 15: integer 123456789012345678901234567890 does not fit in 64 bits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := e.writeSpec("bad.yaml", c.data)
			e.fails([]string{"apply", "--yes", "-f", path}, path+": "+c.want)
			e.fails([]string{"spec", "convert", "-f", path}, path+": "+c.want)
			if r := e.runInput(c.data, "apply", "--yes", "-f", "-"); r.code == 0 || !strings.Contains(r.stderr, "<stdin>: "+c.want) {
				t.Errorf("apply -f - of the bad input: %s", r)
			}
			e.fails([]string{"workspace", "create", "bad", "--file", path}, path+": "+c.want)
		})
	}

	t.Run("size limit", func(t *testing.T) {
		spec := e.writeSpec("spec.yaml", configMap(`"`+strings.Repeat("x", 2000)+`"`))
		e.fails([]string{"spec", "convert", "--max-input-size", "1Ki", "-f", spec}, spec+": 2.2 KiB is over the input size limit of 1 KiB (raise it with --max-input-size or $KUMO_MAX_INPUT_SIZE)")
		e.fails([]string{"--max-input-size", "1Ki", "apply", "--yes", "-f", spec}, spec+": 2.2 KiB is over the input size limit of 1 KiB")
		e.fails([]string{"spec", "convert", "--max-input-size", "lots", "-f", spec}, `--max-input-size (or $KUMO_MAX_INPUT_SIZE): size "lots"`)
		stdin := e.runInput(configMap(`"`+strings.Repeat("x", 2000)+`"`), "apply", "--max-input-size", "1Ki", "--yes", "-f", "-")
		if stdin.code == 0 || !strings.Contains(stdin.stderr, "<stdin>: more than 1 KiB is over the input size limit of 1 KiB") {
			t.Errorf("apply -f - over the limit: %s", stdin)
		}
		dir := filepath.Dir(spec)
		e.fails([]string{"apply", "--max-input-size", "1Ki", "--yes", "-f", dir}, spec+": 2.2 KiB is over")
		env := *e
		env.environ = append(env.environ, "KUMO_MAX_INPUT_SIZE=1Ki")
		env.fails([]string{"workspace", "create", "big", "--file", spec}, spec+": 2.2 KiB is over the input size limit of 1 KiB")
		e.ok("spec", "convert", "-f", spec) // under the default limit
	})

	if r := e.run("release", "list", "-o", "json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("bad input recorded releases: %s", r)
	}
	if got := e.ok("workspace", "list").stdout; got != "* default\n" {
		t.Errorf("bad input created workspaces: %q", got)
	}
}
