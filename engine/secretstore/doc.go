// Package secretstore reads the values of Kusion secret-store references
// (ref://name/property?version=v, see engine.ParseSecretRef) from the store a
// workspace configures: HashiCorp Vault (KV v1 and v2, over its HTTP API) and
// AWS Secrets Manager (aws-sdk-go-v2), with the worker's credentials only
// (its environment and files), never a spec's. Resolve is what a worker calls
// at apply and preview time: it checks each reference against the names the
// workspace allows, reads each secret once, and picks the property; its
// errors name the resource, the field and the store, never a value.
//
// The package does I/O but knows nothing of Temporal: release calls it from
// the worker's activities.
package secretstore
