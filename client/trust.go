package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/backend"
	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/generate"
)

// trustOnFirstUse trusts, as they are now, the external generators of src
// that workspace names no digest for, when this client is the local owner's:
// it keeps its records in its own home (no --backend) and runs on its own
// Temporal (embedded, or the home's kumo server), so the workspace it writes
// is the owner's, and the owner asked for this stack. The quick start's
// generator thus runs with no setup, and is pinned: a changed executable is
// never trusted here again, and the worker refuses it with the command that
// trusts it. A shared backend or an external Temporal gets no such trust:
// there the workspace's administrators trust each generator.
func (c *Client) trustOnFirstUse(ctx context.Context, src *generate.Source, workspace string) error {
	if c.opts.Backend != "" || c.opts.TemporalAddress != "" {
		return nil
	}
	ws, err := c.Workspace(ctx, workspace)
	if err != nil {
		return err
	}
	trust := generate.Trust{Workspace: ws.Name, Config: ws.GeneratorTrust, Dirs: []string{GeneratorsDir(c.opts.Home)}}
	notices := c.opts.Notices
	if notices == nil {
		notices = io.Discard
	}
	var trusted []string
	for _, call := range generate.ExternalCalls(src, ws) {
		_, err := trust.Check(call)
		var untrusted *generate.UntrustedError
		// Trusted already, not found (the run says so), or changed since
		// it was trusted: nothing to do here.
		if !errors.As(err, &untrusted) || untrusted.Trusted != "" {
			continue
		}
		if ws.GeneratorTrust.SHA256 == nil {
			ws.GeneratorTrust.SHA256 = map[string]string{}
		}
		ws.GeneratorTrust.SHA256[call.Generator] = untrusted.SHA256
		trusted = append(trusted, fmt.Sprintf("kumo: trusted generator %s (%s, sha256 %s) in workspace %s on first use; it runs while unchanged (kumo workspace show %s)\n",
			call.Generator, untrusted.Path, untrusted.SHA256, ws.Name, ws.Name))
	}
	if len(trusted) == 0 {
		return nil
	}
	if err := c.backend.PutWorkspace(ctx, ws); err != nil {
		return fmt.Errorf("trust generators in workspace %s: %w", ws.Name, err)
	}
	if err := c.auditOwn(ctx, "workspace trust-generator", src.Project.Name, ws.Name, "workspace "+ws.Name+" (first use)", nil); err != nil {
		return err
	}
	for _, line := range trusted {
		fmt.Fprint(notices, line)
	}
	return nil
}

// TrustGenerator lets generator name run for workspace while its executable
// has the given sha256 (hex), replacing any digest trusted before.
func (c *Client) TrustGenerator(ctx context.Context, workspace, name, sum string) error {
	return c.changeTrust(ctx, workspace, "generator "+name, func(t *engine.GeneratorTrust) {
		if t.SHA256 == nil {
			t.SHA256 = map[string]string{}
		}
		t.SHA256[name] = strings.ToLower(sum)
	})
}

// TrustGeneratorDir lets every executable under dir (absolute) run as a
// generator for workspace.
func (c *Client) TrustGeneratorDir(ctx context.Context, workspace, dir string) error {
	return c.changeTrust(ctx, workspace, "generators under "+dir, func(t *engine.GeneratorTrust) {
		if !slices.Contains(t.Dirs, dir) {
			t.Dirs = append(t.Dirs, dir)
		}
	})
}

// changeTrust applies change to workspace's generator trust, checked as a
// workspace file's would be, stores the workspace and audits the change (of
// what).
func (c *Client) changeTrust(ctx context.Context, workspace, what string, change func(*engine.GeneratorTrust)) error {
	if err := backend.ValidateName("workspace", workspace); err != nil {
		return err
	}
	ws, err := c.Workspace(ctx, workspace)
	if err != nil {
		return err
	}
	change(&ws.GeneratorTrust)
	if err := generate.CheckTrust(ws.GeneratorTrust); err != nil {
		return fmt.Errorf("workspace %s: %w", workspace, err)
	}
	return c.auditOwn(ctx, "workspace trust-generator", "", workspace, "workspace "+workspace+": "+what, c.backend.PutWorkspace(ctx, ws))
}
