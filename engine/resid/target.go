package resid

import (
	"fmt"
	"strings"
)

// Target is a resource address a run is narrowed to (--target), in one of
// three forms:
//
//	an ID         apps/v1:Deployment:demo:web, hashicorp:random:random_password:db
//	kind/name     Deployment/web, deployment/web-*, random_password/db
//	a glob        apps/v1:Deployment:demo:*, *:ConfigMap:demo:*
//
// kind/name matches every resource of that kind (a Kubernetes kind, compared
// without regard to case, or a Terraform resource type) and name, in any
// namespace. In a glob and in the name of kind/name, '*' matches any run of
// characters (':' and '/' included) and '?' one character.
type Target struct {
	// Raw is the address as given, for messages.
	Raw string
	// ID is set for an exact ID.
	ID string
	// Kind and Name are set for kind/name; Name may be a glob.
	Kind, Name string
	// Glob is set for a glob over whole IDs.
	Glob string
}

// globChars are the characters that make an address a glob.
const globChars = "*?"

// ParseTarget reads one --target address. Errors name it and say which forms
// are accepted.
func ParseTarget(s string) (Target, error) {
	raw := s
	s = strings.TrimSpace(s)
	t := Target{Raw: raw}
	switch {
	case s == "":
		return Target{}, fmt.Errorf("--target %q: empty; want a resource ID, kind/name or a glob", raw)
	case strings.ContainsAny(s, "[]{}\\ \t\n"):
		return Target{}, fmt.Errorf("--target %q: only '*' and '?' are glob characters; want a resource ID, kind/name or a glob", raw)
	case strings.Contains(s, ":") && strings.ContainsAny(s, globChars):
		t.Glob = s
	case strings.Contains(s, ":"):
		if _, err := Parse(s, ""); err != nil {
			return Target{}, fmt.Errorf("--target: %w", err)
		}
		t.ID = s
	case strings.Count(s, "/") == 1:
		kind, name, _ := strings.Cut(s, "/")
		if kind == "" || name == "" {
			return Target{}, fmt.Errorf("--target %q: kind/name needs both parts (Deployment/web)", raw)
		}
		if strings.ContainsAny(kind, globChars) {
			return Target{}, fmt.Errorf("--target %q: the kind of kind/name may not be a glob; use a glob over IDs (*:Deployment:*:web)", raw)
		}
		t.Kind, t.Name = kind, name
	default:
		return Target{}, fmt.Errorf("--target %q: want a resource ID (apps/v1:Deployment:demo:web), kind/name (Deployment/web) or a glob (apps/v1:Deployment:demo:*)", raw)
	}
	return t, nil
}

// Matches reports whether the resource id, of type typ (Kubernetes or
// Terraform, "" to tell from the ID), is addressed by t.
func (t Target) Matches(id, typ string) bool {
	switch {
	case t.ID != "":
		return id == t.ID
	case t.Glob != "":
		return glob(t.Glob, id)
	}
	p, err := Parse(id, typ)
	if err != nil {
		return false
	}
	kind := p.Kind
	if p.Type == Terraform {
		kind = p.ResourceType
	}
	return strings.EqualFold(kind, t.Kind) && glob(t.Name, p.Name)
}

// glob matches s against pattern, where '*' is any run of characters and
// '?' one character; iterative, so a pattern of many stars stays linear in
// practice and never recurses.
func glob(pattern, s string) bool {
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[n]):
			p++
			n++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
