package planpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"sigs.k8s.io/yaml"
)

// costLimit bounds one evaluation of one rule (CEL's abstract cost: about one
// unit per operation, per list element visited). Kubernetes allows a
// ValidatingAdmissionPolicy 1,000,000 per expression; a rule here runs once
// per selected resource of a plan that may have thousands, so it gets a tenth.
const costLimit = 100_000

// maxExpression bounds a rule's CEL text.
const maxExpression = 4096

// File is the operator's server-wide policies file (`kumo server|worker
// --plan-policies FILE`), and the file `kumo policy test --policies` reads:
//
//	policies:
//	  - name: ...
type File struct {
	Policies []Rule `json:"policies"`
}

// Set is rules compiled, ready to evaluate; the zero Set (or nil) has no rule.
type Set struct {
	rules []compiled
}

type compiled struct {
	Rule
	// source names where the rule came from (a workspace, a file).
	source string
	prog   cel.Program
}

// Len is how many rules s has.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// env declares the variables an expression sees (see Resource).
var env = func() *cel.Env {
	e, err := cel.NewEnv(
		cel.Variable("desired", cel.DynType),
		cel.Variable("live", cel.DynType),
		cel.Variable("action", cel.StringType),
		cel.Variable("paths", cel.ListType(cel.StringType)),
		cel.Variable("resource", cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		panic(fmt.Sprintf("planpolicy: CEL environment: %v", err)) // fixed declarations: a bug, not input
	}
	return e
}()

// ParseFile reads a policies file (YAML or JSON; see File) and compiles its
// rules; source names the file in errors. Unknown fields are refused, so a
// typo does not silently drop a rule's selector.
func ParseFile(data []byte, source string) (*Set, []Rule, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(bytes.TrimSpace(data)) > 0 && f.Policies == nil {
		return nil, nil, fmt.Errorf("%s: no policies list: want `policies: [{name, match, expression, message, effect}]`", source)
	}
	set, err := Compile(f.Policies, source)
	return set, f.Policies, err
}

// Compile checks and compiles rules; source names where they come from (a
// workspace file, the operator's file) in errors, which also name the rule:
// `prod.yaml: policies[2] "no-lb": expression: ...`.
func Compile(rules []Rule, source string) (*Set, error) {
	set := &Set{rules: make([]compiled, 0, len(rules))}
	seen := map[string]int{}
	for i, r := range rules {
		where := fmt.Sprintf("%s: policies[%d] %q", source, i, r.Name)
		if r.Name == "" {
			return nil, fmt.Errorf("%s: policies[%d]: name: missing", source, i)
		}
		if j, dup := seen[r.Name]; dup {
			return nil, fmt.Errorf("%s: name: also the name of policies[%d]; names must be unique", where, j)
		}
		seen[r.Name] = i
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		prog, err := compile(r.Expression)
		if err != nil {
			return nil, fmt.Errorf("%s: expression: %w", where, err)
		}
		set.rules = append(set.rules, compiled{Rule: r, source: source, prog: prog})
	}
	return set, nil
}

// Join is the rules of every set, in order (server-wide, then the
// workspace's).
func Join(sets ...*Set) *Set {
	out := &Set{}
	for _, s := range sets {
		if s != nil {
			out.rules = append(out.rules, s.rules...)
		}
	}
	return out
}

func compile(expr string) (cel.Program, error) {
	if len(expr) > maxExpression {
		return nil, fmt.Errorf("%d bytes long; at most %d", len(expr), maxExpression)
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, errors.New(strings.TrimSpace(iss.Err().Error()))
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, fmt.Errorf("evaluates to %s; want a bool (true: the rule holds)", t)
	}
	return env.Program(ast, cel.CostLimit(costLimit))
}
