package generate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kumoproj/kumo/engine/input"
)

// TestBadInputInConfigFiles: the workspace, project, stack and app readers refuse
// what no reader of user input may accept (engine/input's bounds), naming the file and
// the position, and a file over the size limit before reading it.
func TestBadInputInConfigFiles(t *testing.T) {
	laughs := "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		prev := string(rune('a' + i))
		laughs += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
	}
	bad := []struct{ name, data, want string }{
		{"billion laughs", laughs, "line 7, column 12: alias *f expands the document"},
		{"deep", "name: " + strings.Repeat("[", 1200) + strings.Repeat("]", 1200), "line 1, column 1007: values nest more than 1000 levels deep"},
		{"not utf-8", "name: x\ncontext: {a: \"\xc3\x28\"}\n", "line 2, column 15: byte 0xc3 is not UTF-8"},
		{"nan", "name: x\ncontext: {a: .nan}\n", "line 2, column 14: .nan is not a number"},
		{"huge number", "name: x\ncontext: {a: 1e999}\n", "line 2, column 14: number 1e999 is out of the range"},
		{"two documents", "name: x\n---\nname: y\n", "2 documents (the second at line 3); want one"},
	}
	for _, c := range bad {
		t.Run("workspace/"+c.name, func(t *testing.T) {
			_, err := ParseWorkspace([]byte(c.data), "ws.yaml", "x")
			checkErr(t, err, "ws.yaml: "+c.want)
		})
		for _, file := range []string{ProjectFile, StackFile, AppFile} {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				stack := writeProject(t, "name: shop\n", webApp)
				path := filepath.Join(stack, file)
				if file == ProjectFile {
					path = filepath.Join(filepath.Dir(stack), file)
				}
				write(t, path, c.data)
				_, err := Load(stack)
				checkErr(t, err, path+": "+c.want)
			})
		}
	}

	t.Run("too large", func(t *testing.T) {
		input.SetMaxSize(100)
		t.Cleanup(func() { input.SetMaxSize(0) })
		stack := writeProject(t, "name: shop\n", webApp)
		app := filepath.Join(stack, AppFile)
		if st, err := os.Stat(app); err != nil || st.Size() <= 100 {
			t.Fatalf("the app file is not over the limit: %v %v", st, err)
		}
		_, err := Load(stack)
		checkErr(t, err, app+": ", "is over the input size limit of 100 bytes")
	})
}

func checkErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
