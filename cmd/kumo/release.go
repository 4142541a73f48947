package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
)

func releaseCommand() *cli.Command {
	output := func(def string) *cli.StringFlag {
		return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: def, Usage: "output format"}
	}
	return &cli.Command{
		Name:  "release",
		Usage: "inspect and unlock the releases of a project+workspace",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list every revision",
				Flags:  []cli.Flag{output("table")},
				Action: releaseList,
			},
			{
				Name:   "show",
				Usage:  "show one revision in full",
				Flags:  []cli.Flag{output("yaml"), &cli.IntFlag{Name: "revision", Usage: "revision (default: latest)"}},
				Action: releaseShow,
			},
			{
				Name:   "unlock",
				Usage:  "mark the latest release failed when the run that owned it is gone",
				Action: releaseUnlock,
			},
		},
	}
}

// releaseRow is one line of `release list`, the same fields in table and JSON.
type releaseRow struct {
	Revision  int              `json:"revision"`
	Stack     string           `json:"stack,omitempty"`
	Operation engine.Operation `json:"operation"`
	Phase     engine.Phase     `json:"phase"`
	SpecHash  string           `json:"specHash"`
	Resources int              `json:"resources"`
	Created   time.Time        `json:"createTime"`
	Modified  time.Time        `json:"modifyTime"`
	RunID     string           `json:"runID,omitempty"`
	Error     string           `json:"error,omitempty"`
}

func releaseList(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, project string) error {
		releases, err := kc.Releases(c.Context, project, c.String("workspace"))
		if err != nil {
			return err
		}
		rows := make([]releaseRow, 0, len(releases))
		for _, r := range releases {
			n := 0
			if r.State != nil {
				n = len(r.State.Resources)
			}
			rows = append(rows, releaseRow{r.Revision, r.Stack, r.Operation, r.Phase, r.SpecHash, n, r.CreateTime, r.ModifyTime, r.RunID, r.Error})
		}
		switch c.String("output") {
		case "json":
			return printJSON(rows)
		case "table", "":
		default:
			return fmt.Errorf("unknown output %q (want table or json)", c.String("output"))
		}
		if len(rows) == 0 {
			fmt.Printf("%s/%s has no releases yet.\n", project, c.String("workspace"))
			return nil
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "REVISION\tOPERATION\tPHASE\tSPEC HASH\tRESOURCES\tCREATED\tDURATION")
		for _, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.16s\t%d\t%s\t%s\n", r.Revision, r.Operation, r.Phase, r.SpecHash, r.Resources,
				r.Created.Local().Format("2006-01-02 15:04:05"), r.Modified.Sub(r.Created).Round(10*time.Millisecond))
		}
		return tw.Flush()
	})
}

func releaseShow(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, project string) error {
		r, err := kc.Release(c.Context, project, c.String("workspace"), c.Int("revision"))
		if err != nil {
			return err
		}
		switch c.String("output") {
		case "json":
			return printJSON(r)
		case "yaml", "":
			data, err := yaml.Marshal(r)
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(data)
			return err
		}
		return fmt.Errorf("unknown output %q (want yaml or json)", c.String("output"))
	})
}

func releaseUnlock(c *cli.Context) error {
	return withClient(c, func(kc *client.Client, project string) error {
		r, err := kc.Unlock(c.Context, project, c.String("workspace"))
		if err != nil {
			return err
		}
		fmt.Printf("Revision %d of %s/%s is now %s.\n", r.Revision, project, c.String("workspace"), r.Phase)
		return nil
	})
}

// withClient runs fn with a client for the command's flags and the project name.
func withClient(c *cli.Context, fn func(kc *client.Client, project string) error) error {
	project, err := projectName(c)
	if err != nil {
		return err
	}
	kc, err := open(c)
	if err != nil {
		return err
	}
	defer kc.CloseBeforeExit()
	return fn(kc, project)
}
