package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/internal/token"
)

// authDir is $KUMO_HOME/auth, where a kumo server keeps what it
// authenticates clients with (its token key and records).
func authDir(c *cli.Context) string {
	home := global(c, "home")
	if home == "" {
		home = client.DefaultHome()
	}
	return filepath.Join(home, "auth")
}

func tokenCommand() *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "bearer tokens a kumo server on this home accepts (for CI jobs and bots)",
		Description: "Tokens are signed with a key kept in $KUMO_HOME/auth (mode 0600) and recorded there without\n" +
			"the token itself; a kumo server on this home accepts them and sees revocations at once.\n" +
			"The subject of a token is token:<subject> in policies and audit lines.",
		Subcommands: []*cli.Command{{
			Name:  "create",
			Usage: "create a token and print it once",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "subject", Usage: "who the token stands for, e.g. ci-deployer (required)", Required: true},
				&cli.StringSliceFlag{Name: "group", Usage: "a group the subject is in (repeatable)"},
				&cli.StringFlag{Name: "ttl", Usage: fmt.Sprintf("how long it is valid, e.g. 8h or 30d (required; at most %dd)", int(token.MaxTTL/(24*time.Hour)))},
			},
			Action: func(c *cli.Context) error {
				ttl, err := token.ParseTTL(c.String("ttl"))
				if err != nil {
					return err
				}
				tok, rec, err := token.Open(authDir(c)).Create(c.String("subject"), c.StringSlice("group"), ttl)
				if err != nil {
					return err
				}
				if err := auditToken(c, "token create", rec); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "token %s for %s, valid until %s; it is shown only now:\n",
					rec.ID, rec.Subject, rec.Expires.Format(time.RFC3339))
				fmt.Println(tok)
				return nil
			},
		}, {
			Name:  "list",
			Usage: "list the tokens issued (never the tokens themselves)",
			Flags: []cli.Flag{outputFlag(formatTable, formatJSON)},
			Action: func(c *cli.Context) error {
				recs, err := token.Open(authDir(c)).List()
				if err != nil {
					return err
				}
				now := time.Now()
				type row struct {
					token.Record
					State string `json:"state"`
				}
				rows := make([]row, 0, len(recs))
				for _, r := range recs {
					rows = append(rows, row{r, r.State(now)})
				}
				return printOutput(c, rows, func() error {
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tSUBJECT\tGROUPS\tCREATED\tEXPIRES\tSTATE")
					for _, r := range rows {
						state := r.State
						if r.Revoked != nil {
							state += " " + r.Revoked.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Subject, strings.Join(r.Groups, ","),
							r.Created.Format(time.RFC3339), r.Expires.Format(time.RFC3339), state)
					}
					return tw.Flush()
				})
			},
		}, {
			Name:      "revoke",
			Usage:     "revoke a token: a kumo server refuses it from its next request",
			ArgsUsage: "ID",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("kumo token revoke takes one token ID (kumo token list shows them)")
				}
				rec, err := token.Open(authDir(c)).Revoke(c.Args().First())
				if err != nil {
					return err
				}
				if err := auditToken(c, "token revoke", rec); err != nil {
					return err
				}
				fmt.Printf("token %s (%s) revoked at %s\n", rec.ID, rec.Subject, rec.Revoked.Format(time.RFC3339))
				return nil
			},
		}},
	}
}

// auditToken records a token change in the backend's audit log. The token is
// created or revoked already: a failure to record it says so, with the ID.
func auditToken(c *cli.Context, action string, rec token.Record) error {
	kc, err := open(c)
	if err != nil {
		return fmt.Errorf("%s %s done, but not recorded in the audit log: %w", action, rec.ID, err)
	}
	defer kc.CloseBeforeExit()
	return kc.AuditTokenChange(c.Context, action, "token "+rec.ID+" for "+rec.Subject, nil)
}
