package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/client"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/drift"
	"github.com/kumoproj/kumo/runspec"
)

// ReleaseSummary is a release in a list: everything but its spec and state.
type ReleaseSummary struct {
	Project    string           `json:"project"`
	Workspace  string           `json:"workspace"`
	Stack      string           `json:"stack,omitempty"`
	Revision   int              `json:"revision"`
	Operation  engine.Operation `json:"operation"`
	Phase      engine.Phase     `json:"phase"`
	SpecHash   string           `json:"specHash"`
	Resources  int              `json:"resources"`
	RollbackOf int              `json:"rollbackOf,omitempty"`
	Error      string           `json:"error,omitempty"`
	engine.People
	CreateTime time.Time `json:"createTime"`
	ModifyTime time.Time `json:"modifyTime"`
	RunID      string    `json:"runID,omitempty"`
	// Label is the version, message and source commit its run gave it;
	// Chart and Git what its spec was rendered or generated from; Target
	// the resources a partial release was narrowed to.
	Label  engine.ReleaseLabel `json:"label,omitzero"`
	Chart  *engine.ChartSource `json:"chart,omitempty"`
	Git    *engine.GitOrigin   `json:"git,omitempty"`
	Target *engine.Targeting   `json:"target,omitempty"`
}

// ReleaseDiff is the difference between the specs of two revisions.
type ReleaseDiff struct {
	From    int                 `json:"from"`
	To      int                 `json:"to"`
	Changes []engine.SpecChange `json:"changes"`
}

// stack is the project and workspace of the path, once the caller may do
// action there.
func (c *call) stack(action authz.Action) (project, workspace string, err error) {
	project, workspace = c.r.PathValue("project"), c.r.PathValue("workspace")
	return project, workspace, c.may(action, project, workspace)
}

func listReleases(c *call) error {
	project, workspace, err := c.stack(authz.List)
	if err != nil {
		return err
	}
	tok, limit, err := c.page("releases", project, workspace)
	if err != nil {
		return err
	}
	sums, err := c.kc.ReleaseSummaries(c.ctx, project, workspace)
	if err != nil {
		return err
	}
	items := make([]ReleaseSummary, len(sums))
	for i, sum := range sums {
		r := sum.Release
		items[i] = ReleaseSummary{
			Project: r.Project, Workspace: r.Workspace, Stack: r.Stack, Revision: r.Revision, Operation: r.Operation,
			Phase: r.Phase, SpecHash: r.SpecHash, RollbackOf: r.RollbackOf, Error: r.Error, People: r.People,
			CreateTime: r.CreateTime, ModifyTime: r.ModifyTime, RunID: r.RunID,
			Label: r.Label, Chart: r.Chart, Git: r.Git, Target: r.Target,
		}
		items[i].Resources = sum.SpecResources
	}
	page, next := offsetPage(items, tok, limit)
	return c.json(http.StatusOK, releaseList{Items: page, NextPageToken: next})
}

func (c *call) revision(name string) (int, error) {
	s := c.r.PathValue(name)
	if name == "to" {
		s = c.r.URL.Query().Get("to")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, invalid(fmt.Errorf("%s %q: want a revision number (1, 2, ...)", name, s))
	}
	return n, nil
}

func getRelease(c *call) error {
	project, workspace, err := c.stack(authz.Show)
	if err != nil {
		return err
	}
	n, err := c.revision("revision")
	if err != nil {
		return err
	}
	r, err := c.kc.Release(c.ctx, project, workspace, n)
	if err != nil {
		return err
	}
	client.MaskRelease(r)
	return c.json(http.StatusOK, r)
}

func diffReleases(c *call) error {
	project, workspace, err := c.stack(authz.Show)
	if err != nil {
		return err
	}
	var revs [2]int
	for i, name := range []string{"revision", "to"} {
		if revs[i], err = c.revision(name); err != nil {
			return err
		}
	}
	changes, err := c.kc.DiffReleases(c.ctx, project, workspace, revs[0], revs[1])
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, ReleaseDiff{From: revs[0], To: revs[1], Changes: changes})
}

func getStatus(c *call) error {
	project, workspace, err := c.stack(authz.Status)
	if err != nil {
		return err
	}
	settings, err := c.kc.Settings(c.ctx, workspace, runspec.RuntimeSettings{})
	if err != nil {
		return err
	}
	st, err := c.kc.Statuses().Read(c.ctx, project, workspace, settings, false)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, st)
}

func listDriftReports(c *call) error {
	project, workspace, err := c.stack(authz.DriftReport)
	if err != nil {
		return err
	}
	tok, limit, err := c.page("drift-reports", project, workspace)
	if err != nil {
		return err
	}
	reports, err := c.kc.Backend().DriftReports(c.ctx, project, workspace)
	if err != nil {
		return err
	}
	slices.Reverse(reports)
	page, next := offsetPage(reports, tok, limit)
	if page == nil {
		page = []*drift.Report{}
	}
	return c.json(http.StatusOK, driftReportList{Items: page, NextPageToken: next})
}

func getDriftReport(c *call) error {
	project, workspace, err := c.stack(authz.DriftReport)
	if err != nil {
		return err
	}
	run := c.r.PathValue("run")
	if run == "latest" {
		run = ""
	} else if !runIDPattern.MatchString(run) {
		return invalid(fmt.Errorf("%q is not a run ID (or latest)", run))
	}
	r, err := c.kc.DriftReport(c.ctx, project, workspace, run)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, r)
}

func listDriftSchedules(c *call) error {
	project := c.r.PathValue("project")
	if err := c.may(authz.List, project, ""); err != nil {
		return err
	}
	s, err := c.kc.ListDriftSchedules(c.ctx, project)
	if err != nil {
		return err
	}
	if s == nil {
		s = []*client.DriftSchedule{}
	}
	return c.json(http.StatusOK, scheduleList{Items: s})
}

func getDriftSchedule(c *call) error {
	project, workspace, err := c.stack(authz.Show)
	if err != nil {
		return err
	}
	s, err := c.kc.DescribeDriftSchedule(c.ctx, project, workspace)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, s)
}
