package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/kumoproj/kumo/authz"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
)

// ProjectInfo is a project kumo has releases of, and where.
type ProjectInfo struct {
	Name       string   `json:"name"`
	Workspaces []string `json:"workspaces"`
}

// StackInfo is the stack of a project's latest release in a workspace.
type StackInfo struct {
	Name      string       `json:"name"`
	Workspace string       `json:"workspace"`
	Revision  int          `json:"revision"`
	Phase     engine.Phase `json:"phase"`
}

// WorkspaceRequest is the body of create and update: the workspace file
// (modules, generators, runtimes, context, drift, approval), as a JSON
// object or a string holding its YAML.
type WorkspaceRequest struct {
	// Name is the new workspace's (create only; update takes the path's).
	Name      string          `json:"name,omitempty"`
	Workspace json.RawMessage `json:"workspace"`
}

// projects are the projects with releases in each workspace the caller
// may list in.
func (c *call) projects() ([]ProjectInfo, error) {
	workspaces, err := c.kc.Workspaces(c.ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*ProjectInfo{}
	for _, ws := range workspaces {
		names, err := c.kc.Backend().ListProjects(c.ctx, ws)
		if err != nil {
			return nil, err
		}
		for _, p := range names {
			if c.may(authz.List, p, ws) != nil {
				continue // listed only where the caller may see it
			}
			if byName[p] == nil {
				byName[p] = &ProjectInfo{Name: p}
			}
			byName[p].Workspaces = append(byName[p].Workspaces, ws)
		}
	}
	out := []ProjectInfo{}
	for _, name := range sortedKeys(byName) {
		out = append(out, *byName[name])
	}
	return out, nil
}

func listProjects(c *call) error {
	ps, err := c.projects()
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, projectList{Items: ps})
}

func listStacks(c *call) error {
	project := c.r.PathValue("project")
	if err := c.may(authz.List, project, ""); err != nil {
		return err
	}
	ps, err := c.projects()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ps, func(p ProjectInfo) bool { return p.Name == project })
	if i < 0 {
		return newProblem(ProblemNotFound, fmt.Sprintf("project %s has no releases in any workspace", project))
	}
	out := stackList{Items: []StackInfo{}}
	for _, ws := range ps[i].Workspaces {
		r, err := c.kc.Release(c.ctx, project, ws, 0)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, StackInfo{Name: r.Stack, Workspace: ws, Revision: r.Revision, Phase: r.Phase})
	}
	return c.json(http.StatusOK, out)
}

// seesWorkspace reports whether the caller views anything in workspace.
func (c *call) seesWorkspace(workspace string) bool {
	scopes, all := c.a.opts.Policy.ViewScopes(authz.Subject{Name: c.subject.Name, Groups: c.subject.Groups})
	if all {
		return true
	}
	for _, s := range scopes {
		if s.Workspace == "*" || s.Workspace == workspace {
			return true
		}
	}
	return false
}

func listWorkspaces(c *call) error {
	names, err := c.kc.Workspaces(c.ctx)
	if err != nil {
		return err
	}
	out := workspaceLst{Items: []string{}}
	for _, n := range names {
		if c.seesWorkspace(n) {
			out.Items = append(out.Items, n)
		}
	}
	return c.json(http.StatusOK, out)
}

func getWorkspace(c *call) error {
	name := c.r.PathValue("workspace")
	if !c.seesWorkspace(name) {
		p := newProblem(ProblemForbidden, fmt.Sprintf("%s may not show workspace %s: that needs a role on a project in it", c.subject.Name, name))
		p.Subject, p.Action, p.Workspace = c.subject.Name, string(authz.Show), name
		return p
	}
	ws, err := c.kc.Workspace(c.ctx, name)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, redactWorkspace(ws))
}

// workspaceBody reads a create or update body into the workspace called name.
func (c *call) workspaceBody(name string) (*engine.Workspace, error) {
	body, err := c.readBody(false)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	var req WorkspaceRequest
	if err := dec.Decode(&req); err != nil {
		return nil, invalid(fmt.Errorf("body: %w", err))
	}
	if name == "" {
		name = req.Name
	} else if req.Name != "" && req.Name != name {
		return nil, invalid(fmt.Errorf("name %q: the path names workspace %q", req.Name, name))
	}
	if name == "" {
		return nil, invalid(errors.New("name: required"))
	}
	if len(req.Workspace) == 0 {
		return nil, invalid(errors.New("workspace: required (the workspace file, as an object or its YAML)"))
	}
	text := []byte(req.Workspace)
	if text[0] == '"' {
		var s string
		if err := json.Unmarshal(text, &s); err != nil {
			return nil, invalid(fmt.Errorf("workspace: %w", err))
		}
		text = []byte(s)
	}
	ws, err := generate.ParseWorkspace(text, "workspace", name)
	if err != nil {
		return nil, invalid(err)
	}
	return ws, nil
}

func createWorkspace(c *call) error {
	if err := c.may(authz.Workspace, "", ""); err != nil {
		return err
	}
	ws, err := c.workspaceBody("")
	if err != nil {
		return err
	}
	if err := c.kc.CreateWorkspace(c.ctx, ws); err != nil {
		return refused(err)
	}
	c.w.Header().Set("Location", Prefix+"/workspaces/"+ws.Name)
	return c.json(http.StatusCreated, redactWorkspace(ws))
}

func updateWorkspace(c *call) error {
	if err := c.may(authz.Workspace, "", ""); err != nil {
		return err
	}
	ws, err := c.workspaceBody(c.r.PathValue("workspace"))
	if err != nil {
		return err
	}
	if err := c.kc.UpdateWorkspace(c.ctx, ws); err != nil {
		return refused(err)
	}
	return c.json(http.StatusOK, redactWorkspace(ws))
}

func deleteWorkspace(c *call) error {
	if err := c.may(authz.Workspace, "", ""); err != nil {
		return err
	}
	force, err := boolParam(c.r.URL.Query().Get("force"))
	if err != nil {
		return invalid(fmt.Errorf("force: %w", err))
	}
	if err := c.kc.DeleteWorkspace(c.ctx, c.r.PathValue("workspace"), force); err != nil {
		return refused(err)
	}
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

func boolParam(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q: want true or false", s)
	}
	return b, nil
}
