package authz

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Subject is who asks: a name ("local:alice", an mTLS certificate's
// subject, a token's subject) and the groups it is in.
type Subject struct {
	Name   string
	Groups []string
}

// GroupPrefix marks a group among a grant's subjects: "group:sre".
const GroupPrefix = "group:"

// Scope is a project/workspace pattern: each segment a name or "*" (any).
type Scope struct {
	Project, Workspace string
}

// Everywhere is "*/*".
var Everywhere = Scope{"*", "*"}

func (s Scope) String() string { return s.Project + "/" + s.Workspace }

// matches reports whether the scope covers project/workspace. An empty
// project and workspace stand for the server as a whole, which only "*/*"
// covers.
func (s Scope) matches(project, workspace string) bool {
	if project == "" && workspace == "" {
		return s == Everywhere
	}
	return (s.Project == "*" || s.Project == project) && (s.Workspace == "*" || s.Workspace == workspace)
}

// ParseScope parses "project/workspace" with "*" for any segment.
func ParseScope(s string) (Scope, error) {
	p, w, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(w, "/") {
		return Scope{}, fmt.Errorf("scope %q: want project/workspace, each a name or *, e.g. shop/*, */prod or */*", s)
	}
	for _, seg := range []string{p, w} {
		if seg == "" || (seg != "*" && strings.ContainsAny(seg, "*?[]{} \t")) {
			return Scope{}, fmt.Errorf("scope %q: segment %q must be a name or * alone (no partial patterns)", s, seg)
		}
		if strings.ContainsAny(seg, "'\"`\\()") {
			return Scope{}, fmt.Errorf("scope %q: segment %q holds a quote, backslash or parenthesis, which no project or workspace name has", s, seg)
		}
	}
	return Scope{p, w}, nil
}

// Grant gives Role to Subjects (names, or "group:<name>") on Scopes.
type Grant struct {
	Role     Role
	Subjects []string
	Scopes   []Scope
}

// Policy is who holds which role where: the grants of the policy file, and
// the home's owner, who is admin and worker everywhere.
type Policy struct {
	// File is where the grants came from; empty for the owner-only policy.
	File   string
	Owner  string
	Grants []Grant
}

// OwnerOnly is the policy of a home without a policy file: its owner may
// do everything, nobody else anything.
func OwnerOnly(owner string) *Policy { return &Policy{Owner: owner} }

// Load reads the policy file at path. A home's default file that does not
// exist is the owner-only policy (LoadDefault); a file named explicitly
// must exist.
func Load(path, owner string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	p.Owner = owner
	return p, nil
}

// LoadDefault is Load for the home's own policy file, which may be absent.
func LoadDefault(path, owner string) (*Policy, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return OwnerOnly(owner), nil
	}
	return Load(path, owner)
}

// Parse reads a policy document; file names it in errors:
//
//	grants:
//	  - role: deployer
//	    subjects: [alice, "group:sre"]
//	    scopes: ["shop/*", "*/staging"]
//
// Unknown keys, unknown roles, empty lists and malformed scopes are errors
// naming the file, the field and its line: a typo must not silently grant
// less, or more, than meant.
func Parse(data []byte, file string) (*Policy, error) {
	p := &Policy{File: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return p, nil // an empty file grants nothing
	}
	errf := func(n *yaml.Node, field, format string, args ...any) error {
		return fmt.Errorf("policy %s: line %d: %s: %s", file, n.Line, field, fmt.Sprintf(format, args...))
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errf(root, "top level", "want a mapping with grants")
	}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "grants" {
			return nil, errf(k, k.Value, "unknown key (a policy has grants)")
		}
		if v.Kind != yaml.SequenceNode {
			return nil, errf(v, "grants", "want a list of grants")
		}
		for gi, gn := range v.Content {
			g, err := parseGrant(gn, fmt.Sprintf("grants[%d]", gi), errf)
			if err != nil {
				return nil, err
			}
			p.Grants = append(p.Grants, g)
		}
	}
	return p, nil
}

func parseGrant(n *yaml.Node, at string, errf func(*yaml.Node, string, string, ...any) error) (Grant, error) {
	var g Grant
	if n.Kind != yaml.MappingNode {
		return g, errf(n, at, "want a mapping with role, subjects and scopes")
	}
	seen := map[string]bool{}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := at + "." + k.Value
		seen[k.Value] = true
		switch k.Value {
		case "role":
			if v.Kind != yaml.ScalarNode {
				return g, errf(v, field, "want a role name")
			}
			r, err := parseRole(v.Value)
			if err != nil {
				return g, errf(v, field, "%v", err)
			}
			g.Role = r
		case "subjects", "scopes":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return g, errf(v, field, "want a non-empty list")
			}
			for j, item := range v.Content {
				itemField := fmt.Sprintf("%s[%d]", field, j)
				if item.Kind != yaml.ScalarNode || strings.TrimSpace(item.Value) == "" {
					return g, errf(item, itemField, "want a non-empty string")
				}
				if k.Value == "subjects" {
					if item.Value == GroupPrefix {
						return g, errf(item, itemField, "group: needs a group name")
					}
					g.Subjects = append(g.Subjects, item.Value)
					continue
				}
				s, err := ParseScope(item.Value)
				if err != nil {
					return g, errf(item, itemField, "%v", err)
				}
				g.Scopes = append(g.Scopes, s)
			}
		default:
			return g, errf(k, field, "unknown key (a grant has role, subjects and scopes)")
		}
	}
	for _, f := range []string{"role", "subjects", "scopes"} {
		if !seen[f] {
			return g, errf(n, at, "missing %s", f)
		}
	}
	return g, nil
}

// GrantsOthers reports whether the policy gives any role to anyone but the
// owner: whether a server shared beyond the owner has anyone to serve.
func (p *Policy) GrantsOthers() bool {
	for _, g := range p.Grants {
		for _, s := range g.Subjects {
			if s != p.Owner {
				return true
			}
		}
	}
	return false
}
