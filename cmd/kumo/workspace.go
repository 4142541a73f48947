package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func workspaceCommand() *cli.Command {
	fileFlag := &cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "workspace file (modules, generators, runtimes, context); required"}
	return &cli.Command{
		Name:  "workspace",
		Usage: "manage workspaces: per-environment module defaults, generators and runtime settings, stored in the backend",
		Subcommands: []*cli.Command{
			{
				Name: "create", Usage: "create a workspace from a file", ArgsUsage: "NAME", Flags: []cli.Flag{fileFlag},
				Action: workspaceAction(func(c *cli.Context, kc *client.Client, name string) error {
					ws, err := workspaceFile(c, name)
					if err != nil {
						return err
					}
					if err := kc.CreateWorkspace(c.Context, ws); err != nil {
						return err
					}
					fmt.Printf("Created workspace %s.\n", name)
					return nil
				}),
			},
			{
				Name: "update", Usage: "replace a workspace's content with a file", ArgsUsage: "NAME", Flags: []cli.Flag{fileFlag},
				Action: workspaceAction(func(c *cli.Context, kc *client.Client, name string) error {
					ws, err := workspaceFile(c, name)
					if err != nil {
						return err
					}
					if err := kc.UpdateWorkspace(c.Context, ws); err != nil {
						return err
					}
					fmt.Printf("Updated workspace %s.\n", name)
					return nil
				}),
			},
			{
				Name: "show", Usage: "print a workspace", ArgsUsage: "[NAME]",
				Flags: []cli.Flag{outputFlag(formatYAML, formatJSON)},
				Action: workspaceAction(func(c *cli.Context, kc *client.Client, name string) error {
					ws, err := kc.Workspace(c.Context, name)
					if err != nil {
						return err
					}
					return printOutput(c, ws, nil)
				}),
			},
			{
				Name: "list", Usage: "list the workspaces; * marks the current one",
				Action: func(c *cli.Context) error {
					kc, err := open(c)
					if err != nil {
						return err
					}
					defer kc.CloseBeforeExit()
					names, err := kc.Workspaces(c.Context)
					if err != nil {
						return err
					}
					current, err := workspaceName(c, kc)
					if err != nil {
						return err
					}
					for _, n := range names {
						mark := " "
						if n == current {
							mark = "*"
						}
						fmt.Printf("%s %s\n", mark, n)
					}
					return nil
				},
			},
			{
				Name: "delete", Usage: "delete a workspace (refused while projects have releases in it, unless --force)", ArgsUsage: "NAME",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "delete even though projects have releases in the workspace"}},
				Action: workspaceAction(func(c *cli.Context, kc *client.Client, name string) error {
					if err := kc.DeleteWorkspace(c.Context, name, c.Bool("force")); err != nil {
						return err
					}
					fmt.Printf("Deleted workspace %s.\n", name)
					return nil
				}),
			},
			{
				Name: "trust-generator", Usage: "let an external generator run for a workspace: by its module name and the sha256 of its executable, or every executable under a directory",
				ArgsUsage: "NAME [GENERATOR]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "sha256", Usage: "the sha256 of GENERATOR's executable, as the refusal printed it (check the file first: sha256sum FILE)"},
					&cli.StringFlag{Name: "dir", Usage: "trust every executable under this absolute directory instead"},
				},
				Action: trustGenerator,
			},
			{
				Name: "switch", Usage: "make a workspace the one commands use when --workspace is not given", ArgsUsage: "NAME",
				Action: workspaceAction(func(c *cli.Context, kc *client.Client, name string) error {
					if err := kc.SwitchWorkspace(c.Context, name); err != nil {
						return err
					}
					fmt.Printf("Now using workspace %s.\n", name)
					return nil
				}),
			},
		},
	}
}

// workspaceAction runs fn with a client and the NAME argument (for show, the
// current workspace when omitted). Flags may follow NAME, as in
// `kumo workspace create prod --file prod.yaml`.
func workspaceAction(fn func(c *cli.Context, kc *client.Client, name string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := positionalArgs(c)
		if err != nil {
			return err
		}
		if len(args) > 1 {
			return fmt.Errorf("want one workspace NAME, got %d arguments: %s", len(args), strings.Join(args, " "))
		}
		kc, err := open(c)
		if err != nil {
			return err
		}
		defer kc.CloseBeforeExit()
		var name string
		if len(args) == 1 {
			name = args[0]
		}
		if name == "" {
			if c.Command.Name != "show" {
				return fmt.Errorf("want a workspace NAME: kumo workspace %s NAME", c.Command.Name)
			}
			if name, err = workspaceName(c, kc); err != nil {
				return err
			}
		}
		return fn(c, kc, name)
	}
}

func workspaceFile(c *cli.Context, name string) (*engine.Workspace, error) {
	if c.String("file") == "" {
		return nil, fmt.Errorf("want the workspace file: kumo workspace %s %s --file FILE", c.Command.Name, name)
	}
	return client.ParseWorkspaceFile(c.String("file"), name)
}

// trustGenerator is `kumo workspace trust-generator NAME GENERATOR --sha256 HEX`
// or `kumo workspace trust-generator NAME --dir DIR`.
func trustGenerator(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	sum, dir := c.String("sha256"), c.String("dir")
	switch {
	case len(args) == 2 && sum != "" && dir == "":
	case len(args) == 1 && dir != "" && sum == "":
	default:
		return fmt.Errorf("want kumo workspace trust-generator NAME GENERATOR --sha256 HEX, or kumo workspace trust-generator NAME --dir DIR")
	}
	kc, err := open(c)
	if err != nil {
		return err
	}
	defer kc.CloseBeforeExit()
	if dir != "" {
		if err := kc.TrustGeneratorDir(c.Context, args[0], dir); err != nil {
			return err
		}
		fmt.Printf("Workspace %s now trusts every generator under %s.\n", args[0], dir)
		return nil
	}
	if err := kc.TrustGenerator(c.Context, args[0], args[1], sum); err != nil {
		return err
	}
	fmt.Printf("Workspace %s now trusts generator %s with sha256 %s.\n", args[0], args[1], sum)
	return nil
}
