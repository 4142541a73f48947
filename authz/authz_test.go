package authz

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const testPolicy = `
grants:
  - role: viewer
    subjects: [alice]
    scopes: ["shop/*"]
  - role: deployer
    subjects: [bob, "group:sre"]
    scopes: ["shop/dev", "*/staging"]
  - role: approver
    subjects: [carol]
    scopes: ["*/prod"]
  - role: admin
    subjects: [dana]
    scopes: ["shop/*"]
  - role: worker
    subjects: [ci-worker]
    scopes: ["*/*"]
  - role: viewer
    subjects: [auditor]
    scopes: ["*/*"]
`

func testP(t *testing.T) *Policy {
	t.Helper()
	p, err := Parse([]byte(testPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Owner = "local:owner"
	return p
}

func TestDecide(t *testing.T) {
	p := testP(t)
	sub := func(name string, groups ...string) Subject { return Subject{Name: name, Groups: groups} }
	cases := []struct {
		s     Subject
		a     Action
		p, w  string
		allow bool
	}{
		{sub("alice"), Show, "shop", "prod", true},
		{sub("alice"), List, "shop", "dev", true},
		{sub("alice"), Apply, "shop", "dev", false},
		{sub("alice"), Show, "blog", "dev", false},
		{sub("bob"), Apply, "shop", "dev", true},
		{sub("bob"), Show, "shop", "dev", true},
		{sub("bob"), Apply, "shop", "prod", false},
		{sub("bob"), Apply, "blog", "staging", true},
		{sub("bob"), Approve, "shop", "dev", false},
		{sub("eve", "sre"), Destroy, "shop", "dev", true},
		{sub("eve", "dev"), Destroy, "shop", "dev", false},
		{sub("carol"), Approve, "shop", "prod", true},
		{sub("carol"), Reject, "blog", "prod", true},
		{sub("carol"), Show, "blog", "prod", true},
		{sub("carol"), Apply, "shop", "prod", false},
		{sub("dana"), Schedule, "shop", "prod", true},
		{sub("dana"), Apply, "shop", "prod", true},
		{sub("dana"), Work, "shop", "prod", false},
		{sub("dana"), AdminAction, "", "", false},
		{sub("dana"), Apply, "blog", "prod", false},
		{sub("ci-worker"), Work, "shop", "prod", true},
		{sub("ci-worker"), Show, "shop", "prod", false},
		{sub("auditor"), Show, "any", "thing", true},
		{sub("auditor"), Apply, "any", "thing", false},
		{sub("local:owner"), AdminAction, "", "", true},
		{sub("local:owner"), Apply, "x", "y", true},
		{sub("local:owner"), Work, "x", "y", true},
		{sub("local:other"), Show, "x", "y", false},
		{sub(""), Show, "shop", "dev", false},
		{sub("local:owner"), Action("explode"), "x", "y", false},
	}
	for _, c := range cases {
		err := p.Decide(c.s, c.a, c.p, c.w)
		if (err == nil) != c.allow {
			t.Errorf("Decide(%v, %s, %s/%s) = %v, want allowed=%v", c.s, c.a, c.p, c.w, err, c.allow)
		}
		var d *DeniedError
		if err != nil && !errors.As(err, &d) {
			t.Errorf("Decide returned %T, want *DeniedError", err)
		}
	}
}

func TestDeniedMessage(t *testing.T) {
	p := testP(t)
	err := p.Decide(Subject{Name: "alice"}, Apply, "shop", "prod")
	want := "alice may not apply shop/prod: that needs role deployer on shop/prod (alice has viewer on shop/*)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	err = p.Decide(Subject{Name: "mallory"}, Terminate, "shop", "dev")
	if err == nil || !strings.Contains(err.Error(), "mallory may not terminate shop/dev: that needs role admin on shop/dev (mallory has no role)") {
		t.Errorf("got %v", err)
	}
	err = p.Decide(Subject{Name: "dana"}, AdminAction, "", "")
	if err == nil || !strings.Contains(err.Error(), "dana may not admin */*: that needs role admin on */*") {
		t.Errorf("got %v", err)
	}
}

func TestOwnerOnly(t *testing.T) {
	p := OwnerOnly("local:me")
	if err := p.Decide(Subject{Name: "local:me"}, Apply, "a", "b"); err != nil {
		t.Error(err)
	}
	if err := p.Decide(Subject{Name: "local:you"}, Show, "a", "b"); err == nil {
		t.Error("a stranger may show under the owner-only policy")
	}
	if p.GrantsOthers() {
		t.Error("owner-only policy grants others")
	}
	if !testP(t).GrantsOthers() {
		t.Error("test policy grants nobody else")
	}
}

func TestRoles(t *testing.T) {
	p := testP(t)
	for _, c := range []struct {
		name, p, w string
		want       []string
	}{
		{"alice", "shop", "dev", []string{"viewer"}},
		{"alice", "blog", "dev", nil},
		{"bob", "shop", "dev", []string{"deployer", "viewer"}},
		{"dana", "shop", "prod", []string{"admin", "approver", "deployer", "viewer"}},
		{"ci-worker", "shop", "prod", nil},
	} {
		if got := p.Roles(Subject{Name: c.name}, c.p, c.w); !slices.Equal(got, c.want) {
			t.Errorf("Roles(%s, %s/%s) = %v, want %v", c.name, c.p, c.w, got, c.want)
		}
	}
}

func TestViewScopes(t *testing.T) {
	p := testP(t)
	if sc, all := p.ViewScopes(Subject{Name: "alice"}); all || !slices.Equal(sc, []Scope{{"shop", "*"}}) {
		t.Errorf("alice: %v %v", sc, all)
	}
	if _, all := p.ViewScopes(Subject{Name: "auditor"}); !all {
		t.Error("auditor does not view */*")
	}
	if sc, all := p.ViewScopes(Subject{Name: "ci-worker"}); all || len(sc) != 0 {
		t.Errorf("a worker views %v %v", sc, all)
	}
	if sc, _ := p.ViewScopes(Subject{Name: "bob"}); len(sc) != 2 {
		t.Errorf("bob: %v", sc)
	}
}

func TestParseErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"grant:\n  - role: viewer\n":                                                 `line 1: grant: unknown key`,
		"grants:\n  - role: viewr\n    subjects: [a]\n    scopes: [a/b]\n":           `line 2: grants[0].role: unknown role "viewr"`,
		"grants:\n  - role: viewer\n    subject: [a]\n    scopes: [a/b]\n":           `line 3: grants[0].subject: unknown key`,
		"grants:\n  - role: viewer\n    subjects: [a]\n    scopes: [shop]\n":         `line 4: grants[0].scopes[0]: scope "shop": want project/workspace`,
		"grants:\n  - role: viewer\n    subjects: [a]\n    scopes: [sh*/dev]\n":      `grants[0].scopes[0]: scope "sh*/dev": segment "sh*" must be a name or * alone`,
		"grants:\n  - role: viewer\n    subjects: [a]\n    scopes: [a/b/c]\n":        `scope "a/b/c"`,
		"grants:\n  - role: viewer\n    subjects: []\n    scopes: [a/b]\n":           `grants[0].subjects: want a non-empty list`,
		"grants:\n  - role: viewer\n    subjects: [a]\n":                             `grants[0]: missing scopes`,
		"grants:\n  - role: viewer\n    subjects: [\"group:\"]\n    scopes: [a/b]\n": `group: needs a group name`,
		"grants: {}\n": `grants: want a list`,
		"grants: [\n":  `policy bad.yaml: yaml`,
	} {
		_, err := Parse([]byte(doc), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("Parse(%q) = %v, want an error with %q naming the file", doc, err, want)
		}
	}
	if p, err := Parse(nil, "empty.yaml"); err != nil || len(p.Grants) != 0 {
		t.Errorf("empty policy: %v %v", p, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if p, err := LoadDefault(path, "local:me"); err != nil || p.File != "" || p.Owner != "local:me" {
		t.Errorf("LoadDefault without a file: %+v %v", p, err)
	}
	if _, err := Load(path, "local:me"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load of a missing file named explicitly: %v", err)
	}
	if err := os.WriteFile(path, []byte(testPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadDefault(path, "local:me")
	if err != nil || len(p.Grants) != 6 || p.Owner != "local:me" || p.File != path {
		t.Errorf("LoadDefault: %+v %v", p, err)
	}
}
