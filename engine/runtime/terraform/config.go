package terraform

import (
	"encoding/json"
	"strings"

	"github.com/kumoproj/kumo/engine"
)

// outputName is the output that holds the whole resource: every attribute, the
// computed ones included, as plain values (the state file keeps some attributes
// in an encoding of their own, such as terraform_data's dynamically typed input).
const outputName = "kumo"

// mainConfig is the main.tf.json of a resource's working directory: the
// provider's requirement and configuration and, withResource, the resource block
// with attrs as its arguments and an output of the whole resource. The builtin
// provider (terraform_data) needs neither a requirement nor a configuration.
func mainConfig(spec *engine.TerraformResource, attrs map[string]any, withResource bool) ([]byte, error) {
	local := spec.Provider.Name
	root := map[string]any{}
	if !spec.Provider.Builtin() {
		req := map[string]any{"source": spec.Provider.Source()}
		if spec.Provider.Version != "" {
			req["version"] = spec.Provider.Version
		}
		root["terraform"] = map[string]any{"required_providers": map[string]any{local: req}}
		meta := map[string]any{}
		for k, v := range spec.ProviderMeta {
			meta[k] = literal(v)
		}
		root["provider"] = map[string]any{local: meta}
	}
	if withResource {
		// The last guard before the resource block is written: whatever called
		// the runtime (a workflow started without validation, a recorded
		// resource), a meta-argument would make terraform run commands on the
		// worker.
		if err := engine.CheckTerraformArguments(attrs); err != nil {
			return nil, err
		}
		body := make(map[string]any, len(attrs)+1)
		for k, v := range attrs {
			body[k] = literal(v)
		}
		if !spec.Provider.Builtin() {
			// The resource type's prefix need not be the provider's name.
			body["provider"] = local
		}
		root["resource"] = map[string]any{spec.Type: map[string]any{spec.Name: body}}
		// Sensitive, or terraform refuses it when an attribute is sensitive; the
		// value is in the state either way.
		root["output"] = map[string]any{outputName: map[string]any{"value": "${" + spec.Type + "." + spec.Name + "}", "sensitive": true}}
	}
	return json.MarshalIndent(root, "", "  ")
}

// literal escapes a value for Terraform's JSON syntax, where strings (object keys
// included) are templates: "${" and "%{" in a value are meant as they are written.
func literal(v any) any {
	switch x := v.(type) {
	case string:
		return escapeTemplate(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[escapeTemplate(k)] = literal(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = literal(e)
		}
		return out
	}
	return v
}

var templateEscaper = strings.NewReplacer("${", "$${", "%{", "%%{")

func escapeTemplate(s string) string { return templateEscaper.Replace(s) }
