package engine

// Spec is the resource-level desired state, in KusionStack's Spec format. It is read
// and written unchanged: fields kumo does not interpret (secretStore, context,
// extensions) round-trip as they are.
type Spec struct {
	Resources   []Resource     `json:"resources"`
	SecretStore any            `json:"secretStore,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	// Hooks are the Argo CD and Helm hooks of a manifest set (a kumo
	// extension of the format): run around a run, never managed (see Hook).
	Hooks []Hook `json:"hooks,omitempty"`
	// Moved are resources recorded under another ID before (a kumo
	// extension, from stack.yaml's moved:, see moved.go).
	Moved []Moved `json:"moved,omitempty"`
}

// Resource is one node of a Spec or a State.
type Resource struct {
	// ID is unique in a Spec: apiVersion:kind:namespace:name for Kubernetes objects,
	// providerNamespace:providerName:resourceType:resourceName for Terraform.
	ID   string `json:"id"`
	Type Type   `json:"type"`
	// Attributes is the resource body: a Kubernetes object, or Terraform arguments.
	Attributes map[string]any `json:"attributes,omitempty"`
	DependsOn  []string       `json:"dependsOn,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Type names the runtime that owns a resource.
type Type string

const (
	Kubernetes Type = "Kubernetes"
	Terraform  Type = "Terraform"
)

// State is the resources as last applied, as the runtime returned them.
type State struct {
	Resources []Resource `json:"resources"`
}
