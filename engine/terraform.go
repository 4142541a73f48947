package engine

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kumoproj/kumo/engine/resid"
)

// Extensions of a Terraform resource (KusionStack's names).
const (
	// ExtProvider is the provider's source address with its version:
	// "registry.terraform.io/hashicorp/local/1.4.0" (the version may be left out).
	ExtProvider = "provider"
	// ExtProviderMeta is the provider's configuration (its provider block).
	ExtProviderMeta = "providerMeta"
	// ExtResourceType is the Terraform resource type, e.g. "local_file".
	ExtResourceType = "resourceType"
	// ExtImportID asks the runtime to adopt the existing object with this import ID
	// instead of creating one.
	ExtImportID = "kusionstack.io/import-id"
	// ExtTerraformState carries, on a recorded Terraform resource only, its terraform
	// state (the terraform.tfstate JSON, as a string). The runtime returns it with
	// every result; kumo records it with the resource and hands it back before the
	// next operation, so the state never lives only on a worker's disk. It is not
	// part of the desired state: Diff compares attributes only, and spec resources
	// do not carry it.
	ExtTerraformState = "kumoproj.io/terraform-state"
)

// TerraformResource is what the Terraform runtime needs to know of a resource
// besides its arguments, read from its ID and extensions by ParseTerraform.
type TerraformResource struct {
	Provider TerraformProvider
	// ProviderMeta is the provider's configuration, nil when there is none.
	ProviderMeta map[string]any
	// Type and Name form the resource's address in its configuration: Type.Name.
	Type, Name string
	// ImportID, when set, names an existing object to adopt.
	ImportID string
}

// TerraformProvider is a provider source address with an optional version.
type TerraformProvider struct {
	Host, Namespace, Name, Version string
}

// Source is the provider's source address without the version.
func (p TerraformProvider) Source() string { return p.Host + "/" + p.Namespace + "/" + p.Name }

// Builtin reports whether the provider is built into terraform
// (terraform.io/builtin/terraform, which has terraform_data): nothing to install.
func (p TerraformProvider) Builtin() bool {
	return p.Host == "terraform.io" && p.Namespace == "builtin"
}

// TerraformID returns the ID of a Terraform resource:
// providerNamespace:providerName:resourceType:resourceName, e.g.
// "hashicorp:local:local_file:config". resid.Parse reads it back.
func TerraformID(providerNamespace, providerName, resourceType, resourceName string) string {
	return providerNamespace + ":" + providerName + ":" + resourceType + ":" + resourceName
}

// identifier is a Terraform name: a letter or underscore, then letters, digits,
// underscores and dashes.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ParseTerraform reads a Terraform resource's provider, type, name and import ID
// from its ID (providerNamespace:providerName:resourceType:resourceName) and its
// extensions (provider, providerMeta, resourceType, kusionstack.io/import-id). Every
// problem is reported, each naming the resource.
func ParseTerraform(r *Resource) (*TerraformResource, error) {
	return parseTerraform(r, r.ID)
}

// parseTerraform is ParseTerraform with each problem prefixed by who.
func parseTerraform(r *Resource, who string) (*TerraformResource, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{who}, args...)...))
	}
	out := &TerraformResource{}
	id, idErr := resid.Parse(r.ID, resid.Terraform)
	if idErr != nil {
		bad("not a Terraform resource ID (providerNamespace:providerName:resourceType:resourceName)")
	} else {
		out.Type, out.Name = id.ResourceType, id.Name
		if !identifier.MatchString(out.Name) {
			bad("resource name %q is not a Terraform name (letters, digits, _ and -, not starting with a digit or -)", out.Name)
		}
	}

	source, ok := r.Extensions[ExtProvider].(string)
	switch {
	case r.Extensions[ExtProvider] == nil:
		bad("missing extensions.%s (the provider's source and version, e.g. registry.terraform.io/hashicorp/local/1.4.0)", ExtProvider)
	case !ok:
		bad("extensions.%s is not a string", ExtProvider)
	default:
		p, err := parseProvider(source)
		if err != nil {
			bad("extensions.%s: %v", ExtProvider, err)
		} else {
			out.Provider = p
			if idErr == nil && (id.ProviderNamespace != p.Namespace || id.ProviderName != p.Name) {
				bad("id names provider %s/%s but extensions.%s is %s", id.ProviderNamespace, id.ProviderName, ExtProvider, source)
			}
		}
	}

	typ, ok := r.Extensions[ExtResourceType].(string)
	switch {
	case r.Extensions[ExtResourceType] == nil:
		bad("missing extensions.%s (the Terraform resource type, e.g. local_file)", ExtResourceType)
	case !ok || !identifier.MatchString(typ):
		bad("extensions.%s %v is not a Terraform resource type", ExtResourceType, r.Extensions[ExtResourceType])
	case idErr == nil && typ != id.ResourceType:
		bad("id names resource type %s but extensions.%s is %s", id.ResourceType, ExtResourceType, typ)
	}

	if m, ok := r.Extensions[ExtProviderMeta]; ok && m != nil {
		if out.ProviderMeta, ok = m.(map[string]any); !ok {
			bad("extensions.%s is not an object", ExtProviderMeta)
		}
	}
	if v, ok := r.Extensions[ExtImportID]; ok && v != nil {
		if out.ImportID, ok = v.(string); !ok || out.ImportID == "" {
			bad("extensions.%q is not a non-empty string", ExtImportID)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// parseProvider reads host/namespace/name[/version].
func parseProvider(s string) (TerraformProvider, error) {
	parts := strings.Split(s, "/")
	if (len(parts) != 3 && len(parts) != 4) || slices.Contains(parts, "") {
		return TerraformProvider{}, fmt.Errorf("%q is not host/namespace/name[/version]", s)
	}
	p := TerraformProvider{Host: parts[0], Namespace: parts[1], Name: parts[2]}
	if len(parts) == 4 {
		p.Version = parts[3]
	}
	if !identifier.MatchString(p.Name) {
		return TerraformProvider{}, fmt.Errorf("%q: provider name %q is not a Terraform name", s, p.Name)
	}
	return p, nil
}

// terraformMetaArguments are the keys of a Terraform resource block that are not
// the resource's own arguments but instructions to terraform itself: provisioner
// and connection run commands on the worker (local-exec) or elsewhere,
// lifecycle, count, for_each and depends_on change what is planned beyond the
// one object the spec names, and provider picks another provider configuration.
// Terraform reserves these names, so no provider has an argument so named and
// refusing them loses nothing. moved, import, removed and check are top-level
// blocks of a configuration, not keys of a resource block: attributes are written
// inside the resource block only, where terraform rejects them as unsupported
// arguments.
var terraformMetaArguments = []string{"connection", "count", "depends_on", "for_each", "lifecycle", "provider", "provisioner"}

// CheckTerraformArguments reports every key of a Terraform resource's attributes
// that is a Terraform meta-argument, not an argument of the resource: a spec
// carries the resource's arguments only. The worker runs what a resource block
// says, so both validation and the Terraform runtime refuse these.
func CheckTerraformArguments(attrs map[string]any) error {
	var errs []error
	for _, k := range terraformMetaArguments {
		if _, ok := attrs[k]; ok {
			errs = append(errs, fmt.Errorf("attribute %q is a Terraform meta-argument: a spec carries the resource's arguments only", k))
		}
	}
	return errors.Join(errs...)
}
