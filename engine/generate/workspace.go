package generate

import (
	"fmt"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/engine/planpolicy"
)

// ParseWorkspace reads a workspace file (modules, generators, runtimes, context)
// for the workspace called name. source names the file in errors. A name in the
// file must match. Built-in modules' defaults are checked against their schema,
// so a typo is caught when the workspace is saved, not at the next apply.
func ParseWorkspace(data []byte, source, name string) (*engine.Workspace, error) {
	doc, err := input.ParseYAML(data, source)
	if err != nil {
		return nil, err
	}
	ws := &engine.Workspace{}
	if doc != nil {
		if err := decode("", doc, ws); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	if ws.Name != "" && ws.Name != name {
		return nil, fmt.Errorf("%s: name: the file is for workspace %q, not %q", source, ws.Name, name)
	}
	ws.Name = name
	if err := ws.Drift.Validate(source); err != nil {
		return nil, err
	}
	// Plain http to other hosts than loopback ones is the worker operator's
	// to allow (notify.Operator.AllowHTTP), checked again when a POST is sent.
	if err := ws.Notifications.Validate("notifications.", false); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := ws.Approval.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := ws.Health.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if _, err := planpolicy.Compile(ws.Policies, source); err != nil {
		return nil, err
	}
	if err := ws.SecretStore.Validate("secretStore"); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := ws.Sources.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := ws.Runtimes.Kubernetes.CheckKubeconfigs(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := CheckTrust(ws.GeneratorTrust); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if err := engine.CheckProviderPatterns(ws.Runtimes.Terraform.AllowedProviders); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	for module := range ws.Modules {
		check := moduleCheck(module)
		if check == nil {
			continue // an external generator's config: only it knows the schema
		}
		if err := check(fmt.Sprintf("modules.%s.config", module), moduleConfig(ws, module)); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	for gen, decl := range ws.Generators {
		if err := checkGenerator(gen, decl); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	return ws, nil
}
