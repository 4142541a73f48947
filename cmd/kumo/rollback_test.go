package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// versioned: a Namespace and ConfigMaps name -> value of data.v.
func versioned(ns string, cms ...string) string {
	s := "resources:\n" + namespace(ns)
	for i := 0; i+1 < len(cms); i += 2 {
		s += fmt.Sprintf(`- id: v1:ConfigMap:%[1]s:%[2]s
  type: Kubernetes
  dependsOn: [v1:Namespace:%[1]s]
  attributes:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %[2]s, namespace: %[1]s}
    data: {v: "%[3]s"}
`, ns, cms[i], cms[i+1])
	}
	return s
}

// configMapData returns name -> data.v of the ConfigMaps in e's namespace.
func (e *env) configMapData() map[string]string {
	e.t.Helper()
	list, err := e.kube.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			out[cm.Name] = cm.Data["v"]
		}
	}
	return out
}

type releaseInfo struct {
	Revision   int    `json:"revision"`
	Operation  string `json:"operation"`
	Phase      string `json:"phase"`
	SpecHash   string `json:"specHash"`
	RollbackOf int    `json:"rollbackOf"`
	Size       int    `json:"size"`
}

func (e *env) releaseInfos() []releaseInfo {
	e.t.Helper()
	var rows []releaseInfo
	r := e.ok("release", "list", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// TestRollbackToTheLastSuccess: apply v1, apply v2 (one changed, one added, one
// removed), roll back: the cluster is v1 again, as a new revision with v1's hash.
func TestRollbackToTheLastSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v1 := versioned(e.ns, "a", "1", "b", "1", "c", "1")
	v2 := versioned(e.ns, "a", "2", "b", "1", "d", "1")
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", v1))
	e.ok("apply", "--yes", "-f", e.writeSpec("v2.yaml", v2))

	// release diff 1 2: exactly the changed, added and removed resources.
	var diff struct {
		Changes []struct {
			ID     string `json:"id"`
			Kind   string `json:"kind"`
			Fields []struct {
				Path   string `json:"path"`
				Before any    `json:"before"`
				After  any    `json:"after"`
			} `json:"fields"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(e.ok("release", "diff", "-o", "json", "1", "2").stdout), &diff); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range diff.Changes {
		line := c.Kind + " " + strings.TrimPrefix(c.ID, "v1:ConfigMap:"+e.ns+":")
		for _, f := range c.Fields {
			line += fmt.Sprintf(" %s:%v->%v", f.Path, f.Before, f.After)
		}
		got = append(got, line)
	}
	if want := []string{"changed a attributes.data.v:1->2", "added d", "removed c"}; !slices.Equal(got, want) {
		t.Errorf("release diff 1 2 = %q, want %q", got, want)
	}
	if r := e.ok("release", "diff", "1", "1", "-o", "table"); !strings.Contains(r.stdout, "No differences") {
		t.Errorf("diff of a revision with itself: %s", r.stdout)
	}

	out := e.ok("rollback", "--yes")
	if !strings.Contains(out.stdout, "Release 3 succeeded (rollback)") {
		t.Errorf("rollback output:\n%s", out.stdout)
	}
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "1", "b": "1", "c": "1"}) {
		t.Errorf("cluster after rollback = %v, want v1", got)
	}
	rows := e.releaseInfos()
	if len(rows) != 3 || rows[2].Operation != "rollback" || rows[2].RollbackOf != 1 || rows[2].SpecHash != rows[0].SpecHash || rows[2].Size == 0 {
		t.Errorf("releases after rollback = %+v", rows)
	}
	if table := e.ok("release", "list").stdout; !strings.Contains(table, "ROLLBACK OF") || !strings.Contains(table, "rollback") {
		t.Errorf("release list table:\n%s", table)
	}

	// The same content with keys in another order has the same hash.
	reordered := strings.ReplaceAll(v1, "    apiVersion: v1\n    kind: ConfigMap\n", "    kind: ConfigMap\n    apiVersion: v1\n")
	e.ok("apply", "--yes", "-f", e.writeSpec("v1-reordered.yaml", reordered))
	if rows := e.releaseInfos(); rows[3].SpecHash != rows[0].SpecHash {
		t.Errorf("reordered keys changed the spec hash: %s vs %s", rows[3].SpecHash, rows[0].SpecHash)
	}
}

// TestRollbackToAnEarlierRevision restores revision 1 after three applies, and
// refuses a failed revision unless allowed.
func TestRollbackToAnEarlierRevision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("apply", "--yes", "-f", e.writeSpec("v1.yaml", versioned(e.ns, "a", "1", "b", "1")))
	e.ok("apply", "--yes", "-f", e.writeSpec("v2.yaml", versioned(e.ns, "a", "2")))
	e.ok("apply", "--yes", "-f", e.writeSpec("v3.yaml", versioned(e.ns, "a", "3", "c", "3")))
	e.ok("rollback", "--yes", "--revision", "1")
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "1", "b": "1"}) {
		t.Errorf("cluster after rollback to 1 = %v", got)
	}
	// Revision 5 fails: a reference to a field that does not exist.
	bad := versioned(e.ns, "a", "1", "b", "1") + configMap(e.ns, "broken", "dependsOn: [v1:Namespace:"+e.ns+"]")
	bad = strings.Replace(bad, "data: {k: v}", "data: {k: $kumo_path.v1:ConfigMap:"+e.ns+":a.data.nope}", 1)
	e.fails([]string{"apply", "--yes", "-f", e.writeSpec("bad.yaml", bad)}, "data.nope")
	e.fails([]string{"rollback", "--yes", "--revision", "5"}, "revision 5", "--allow-failed")
	e.fails([]string{"rollback", "--yes", "--revision", "6"}, "cannot roll back to revision 6")
	// Allowed, it is applied again, and fails again the same way.
	e.fails([]string{"rollback", "--yes", "--revision", "5", "--allow-failed"}, "data.nope")
	rows := e.releaseInfos()
	if last := rows[len(rows)-1]; last.Revision != 6 || last.RollbackOf != 5 || last.Operation != "rollback" || last.Phase != "failed" {
		t.Errorf("last release = %+v", last)
	}
}

// TestNamedVersions: applies named alpha1 and beta1 (with a message, and the
// commit of the git checkout the spec is in) are listed with their names; a
// name already used is refused naming its revision; rollback --version
// alpha1 restores alpha1's spec as a new revision with its spec hash.
func TestNamedVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	repo := t.TempDir()
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	v1 := filepath.Join(repo, "v1.yaml")
	if err := os.WriteFile(v1, []byte(versioned(e.ns, "a", "1")), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("init", "-q", "-b", "main")
	gitIn("add", ".")
	gitIn("commit", "-q", "-m", "v1")
	commit := gitIn("rev-parse", "HEAD")

	e.ok("apply", "--yes", "--version", "alpha1", "--message", "first cut", "-f", v1)
	e.ok("apply", "--yes", "--version", "beta1", "-f", e.writeSpec("v2.yaml", versioned(e.ns, "a", "2")))
	e.fails([]string{"apply", "--yes", "--version", "alpha1", "-f", e.writeSpec("v3.yaml", versioned(e.ns, "a", "3"))},
		"--version alpha1: revision 1 of "+e.project+"/default already has it")
	e.fails([]string{"apply", "--yes", "--version", "-bad", "-f", v1}, `--version "-bad"`)

	var rows []struct {
		Revision     int    `json:"revision"`
		SpecHash     string `json:"specHash"`
		Version      string `json:"version"`
		Message      string `json:"message"`
		SourceCommit string `json:"sourceCommit"`
		RollbackOf   int    `json:"rollbackOf"`
	}
	list := func() {
		t.Helper()
		if err := json.Unmarshal([]byte(e.ok("release", "list", "-o", "json").stdout), &rows); err != nil {
			t.Fatal(err)
		}
	}
	list()
	if len(rows) < 2 || rows[0].Version != "alpha1" || rows[0].Message != "first cut" || rows[0].SourceCommit != commit || rows[1].Version != "beta1" || rows[1].SourceCommit != "" {
		t.Fatalf("releases = %+v, want alpha1 (first cut, commit %s) and beta1", rows, commit)
	}
	if table := e.ok("release", "list").stdout; !strings.Contains(table, "VERSION") || !strings.Contains(table, "alpha1") {
		t.Errorf("release list does not show the versions:\n%s", table)
	}

	e.ok("rollback", "--yes", "--version", "alpha1", "--message", "back to alpha1")
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "1"}) {
		t.Errorf("cluster after rollback --version alpha1 = %v", got)
	}
	list()
	last := rows[len(rows)-1]
	if last.RollbackOf != 1 || last.SpecHash != rows[0].SpecHash || last.Message != "back to alpha1" || last.Version != "" {
		t.Errorf("the rollback's release = %+v, want rollbackOf 1 with alpha1's spec hash %s", last, rows[0].SpecHash)
	}
	e.fails([]string{"rollback", "--yes", "--version", "gamma"}, "no release of "+e.project+"/default is named gamma")
	e.fails([]string{"rollback", "--yes", "--version", "alpha1", "--revision", "1"}, "not both")
}

// TestRefresh: after a ConfigMap is edited and another deleted out of band,
// kumo refresh records them as they are live, as a new revision of the same
// spec, changing nothing live; the next preview plans to put them back.
func TestRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	spec := e.writeSpec("v1.yaml", versioned(e.ns, "a", "1", "b", "1"))
	e.ok("apply", "--yes", "-f", spec)
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"v":"edited"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := e.ok("refresh", "--yes", "--message", "after the incident")
	if !strings.Contains(r.stdout, "v1:ConfigMap:"+e.ns+":a  (changed outside kumo since the last release)") {
		t.Errorf("refresh does not list what differed:\n%s", r.stdout)
	}
	if got := e.configMapData(); !mapsEqual(got, map[string]string{"a": "edited"}) {
		t.Errorf("refresh changed the cluster: %v", got)
	}
	rows := e.releaseInfos()
	if len(rows) != 2 || rows[1].Operation != "refresh" || rows[1].Phase != "succeeded" || rows[1].SpecHash != rows[0].SpecHash {
		t.Fatalf("releases = %+v, want a succeeded refresh of revision 1's spec", rows)
	}
	var rel struct {
		State struct {
			Resources []struct {
				ID         string         `json:"id"`
				Attributes map[string]any `json:"attributes"`
			} `json:"resources"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(e.ok("release", "show", "--revision", "2", "-o", "json").stdout), &rel); err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, res := range rel.State.Resources {
		data, _ := res.Attributes["data"].(map[string]any)
		if v, ok := data["v"].(string); ok {
			recorded[res.ID] = v
		}
	}
	if recorded["v1:ConfigMap:"+e.ns+":a"] != "edited" || recorded["v1:ConfigMap:"+e.ns+":b"] != "" {
		t.Errorf("revision 2 records %v, want a as edited and b gone", recorded)
	}
	changes := e.preview(spec)
	if c := changes["v1:ConfigMap:"+e.ns+":a"]; c.Action != "Update" {
		t.Errorf("preview after refresh: a %+v, want an update back", c)
	}
	if c := changes["v1:ConfigMap:"+e.ns+":b"]; c.Action != "Create" {
		t.Errorf("preview after refresh: b %+v, want a create", c)
	}
}
