package engine

import (
	"fmt"
	pathpkg "path"
	"slices"
	"strings"
)

// DefaultAllowedProviders are the provider sources every workspace allows:
// HashiCorp's own providers on the public registry. A workspace that sets no
// runtimes.terraform.allowedProviders also allows the registry hosts its
// releases already use (ProviderHostsInUse), so existing stacks keep working.
var DefaultAllowedProviders = []string{"registry.terraform.io/hashicorp/*"}

// CheckProviderPatterns reports a pattern ProviderAllowed cannot use:
// host/namespace/name, each part a pathpkg.Match pattern, or host/* for every
// provider of a host.
func CheckProviderPatterns(patterns []string) error {
	for i, p := range patterns {
		parts := strings.Split(p, "/")
		if !(len(parts) == 3 || len(parts) == 2 && parts[1] == "*") || slices.Contains(parts, "") {
			return fmt.Errorf("runtimes.terraform.allowedProviders[%d]: %q is not host/namespace/name or host/* (e.g. registry.terraform.io/hashicorp/*)", i, p)
		}
		for _, part := range parts {
			if _, err := pathpkg.Match(part, ""); err != nil {
				return fmt.Errorf("runtimes.terraform.allowedProviders[%d]: %q: %v", i, p, err)
			}
		}
	}
	return nil
}

// ProviderAllowed reports whether p's source matches one of patterns. The
// provider built into terraform (terraform_data) needs no download and is
// always allowed.
func ProviderAllowed(patterns []string, p TerraformProvider) bool {
	if p.Builtin() {
		return true
	}
	have := []string{p.Host, p.Namespace, p.Name}
	for _, pattern := range patterns {
		parts := strings.Split(pattern, "/")
		if len(parts) == 2 && parts[1] == "*" {
			parts = []string{parts[0], "*", "*"}
		}
		if len(parts) != 3 {
			continue
		}
		match := true
		for i := range parts {
			if ok, err := pathpkg.Match(parts[i], have[i]); err != nil || !ok {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// ProviderHostsInUse returns, as host/* patterns in order, the registry hosts
// of the providers of resources' Terraform resources (the builtin provider
// aside). Pass resources that were applied, never a spec merely submitted: a
// refused spec must not widen what the next one may use.
func ProviderHostsInUse(resources []Resource) []string {
	var hosts []string
	for i := range resources {
		if resources[i].Type != Terraform {
			continue
		}
		source, _ := resources[i].Extensions[ExtProvider].(string)
		p, err := parseProvider(source)
		if err != nil || p.Builtin() {
			continue
		}
		hosts = append(hosts, p.Host+"/*")
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}
