package client

import (
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/kumoproj/kumo/runspec"
)

// staticSummary is the one line the Web UI shows for a run in its list: what
// is known when the run starts ("apply shop/dev", "rollback shop/dev to
// revision 3"). How it ends is the run's own to tell (current details).
func staticSummary(operation string, req Request) string {
	s := fmt.Sprintf("%s %s/%s", operation, req.Project, req.Workspace)
	if req.rollbackOf > 0 {
		s += fmt.Sprintf(" to revision %d", req.rollbackOf)
	}
	if g := req.git; g != nil {
		s += fmt.Sprintf(" from %s@%.12s", g.Source, g.Commit)
	}
	return s
}

// staticDetails is the markdown the Web UI shows on a run's page: where the
// desired state comes from and how the run was asked to go, so a reader
// understands the run without the command line that started it.
//
// pages is the root of the run pages ("" for none): the details link the
// run's page, whose run ID is not known before the run starts. The Web UI
// renders details as markdown, links opening in a new tab, and puts the run
// ID it shows for {runId}, as for {namespace} and {workflowId}.
func staticDetails(operation string, req Request, in any, pages string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**kumo %s** of project `%s`, workspace `%s`", operation, req.Project, req.Workspace)
	if req.Stack != "" {
		fmt.Fprintf(&b, ", stack `%s`", req.Stack)
	}
	b.WriteString("\n\n")
	line := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "- %s: %s\n", name, fmt.Sprintf(format, args...))
	}
	run, _ := in.(runspec.RunInput)
	switch {
	case req.rollbackOf > 0:
		line("spec", "revision %d's, `%s`", req.rollbackOf, run.SpecHash)
	case run.SpecHash != "":
		line("spec", "`%s`, from a spec file", run.SpecHash)
	case run.Git != nil:
		g := run.Git
		line("spec", "generated from git source `%s`: %s@%s, commit `%s`, path `%s`", g.Source, g.URL, g.Ref, g.Commit, g.Path)
	case req.StackDir != "":
		line("spec", "generated from the stack directory `%s`", req.StackDir)
	case operation == "destroy":
		line("spec", "none: deletes what the latest release recorded")
	}
	if run.Project != "" {
		line("parallelism", "%d", run.Parallelism)
		if run.AutoApprove {
			line("approval", "given at start (`--yes`)")
		} else {
			line("approval", "asked after the preview")
		}
		if run.RollbackOnFailure {
			line("on failure", "undo this run's changes (`--rollback-on-failure`)")
		}
	}
	if pages != "" {
		page := pages + "/runs/{runId}"
		line("page", "[%s](%s): the plan side by side, each resource's outcome, the release", page, page)
	}
	// What the client says of itself, so marked: the run's current details
	// name the starter the kumo server authenticated.
	line("client", "`%s` (as it says; see the current details for who started the run)", startedBy())
	return b.String()
}

// startedBy is user@host, as far as they are known: who started a run, or
// answered it.
func startedBy() string {
	name := "?"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		return name
	}
	return name + "@" + host
}
