package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// planPoliciesFlag is the operator's server-wide plan policies file, for
// `kumo server` and `kumo worker`.
func planPoliciesFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "plan-policies", Usage: "a policies `FILE` (policies: [{name, match, expression, message, effect}]) every plan of every workspace must pass before approval, besides the workspace's own (default: none)"}
}

// loadPlanPolicies reads --plan-policies; a file that cannot be read or
// compiled stops the start, naming the file and the rule.
func loadPlanPolicies(c *cli.Context) (*planpolicy.Set, error) {
	path := c.String("plan-policies")
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--plan-policies: %w", err)
	}
	set, _, err := planpolicy.ParseFile(data, path)
	return set, err
}

func policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "plan policies: rules in CEL every plan must pass before approval",
		Subcommands: []*cli.Command{{
			Name:  "test",
			Usage: "evaluate policies over a spec without a cluster (every resource as a create); exits 1 on a deny",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "spec-file", Aliases: []string{"f"}, Required: true, Usage: "the spec to check (YAML or JSON)"},
				&cli.StringFlag{Name: "policies", Usage: "a policies file to evaluate (default: the workspace's stored policies)"},
				outputFlag(formatTable, formatJSON),
			},
			Action: policyTest,
		}},
	}
}

func policyTest(c *cli.Context) error {
	data, err := os.ReadFile(c.String("spec-file"))
	if err != nil {
		return err
	}
	spec, err := input.ParseSpec(data, c.String("spec-file"))
	if err != nil {
		return err
	}
	var set *planpolicy.Set
	if path := c.String("policies"); path != "" {
		if globalSet(c, "workspace") != "" {
			return fmt.Errorf("--policies %s and --workspace %s: give one, the rules to evaluate", path, globalSet(c, "workspace"))
		}
		pdata, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if set, _, err = planpolicy.ParseFile(pdata, path); err != nil {
			return err
		}
	} else {
		kc, err := open(c)
		if err != nil {
			return err
		}
		defer kc.CloseBeforeExit()
		name, err := workspaceName(c, kc)
		if err != nil {
			return err
		}
		ws, err := kc.Workspace(c.Context, name)
		if err != nil {
			return err
		}
		if set, err = planpolicy.Compile(ws.Policies, "workspace "+name); err != nil {
			return err
		}
	}
	resources := make([]planpolicy.Resource, len(spec.Resources))
	for i := range spec.Resources {
		r := &spec.Resources[i]
		resources[i] = engine.PolicyResource(engine.Change{ID: r.ID, Type: r.Type, Action: engine.Create}, r, nil)
	}
	res := set.Evaluate(resources)
	err = printOutput(c, res, func() error {
		fmt.Printf("%d rules over %d resources (each as a create): %d violations.\n", set.Len(), len(resources), len(res.Violations))
		printPolicies(os.Stdout, res.Violations)
		return nil
	})
	if err != nil {
		return err
	}
	return res.Denied()
}

// printPolicies lists a plan's policy violations, each with its effect,
// resource, rule and message.
func printPolicies(w io.Writer, vs []planpolicy.Violation) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(w, "Policies: %d violations\n", len(vs))
	for _, v := range vs {
		fmt.Fprintf(w, "  %-16s %s\n", v.Effect, v)
	}
}
